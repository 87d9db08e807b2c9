#include "ports/posix/thread_pool.h"

namespace pocketlm {

namespace {

// About a millisecond of polling before a worker sleeps: longer than the gap between two
// matmuls of a token, shorter than a human-visible wait.
constexpr int kSpinRounds = 20000;

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

}  // namespace

ThreadPool::ThreadPool(int threads) {
  for (int i = 1; i < threads; ++i) threads_.emplace_back([this] { worker_loop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_.store(true);
  }
  wake_.notify_all();
  for (std::thread& t : threads_) t.join();
}

// The ticket packs the job's generation, its task count and the next task index into one
// word, so that "is index i a task of this job" is decided on one atomic value: a worker
// that wakes late with an old value can never mistake a later job's count for its own.
namespace {
constexpr int kIndexBits = 20;
constexpr std::uint64_t kIndexMask = (1ull << kIndexBits) - 1;
std::uint64_t make_ticket(std::uint32_t generation, int n) {
  return (static_cast<std::uint64_t>(generation) << (2 * kIndexBits)) | (static_cast<std::uint64_t>(n) << kIndexBits);
}
std::uint32_t generation_of(std::uint64_t t) { return static_cast<std::uint32_t>(t >> (2 * kIndexBits)); }
int count_of(std::uint64_t t) { return static_cast<int>((t >> kIndexBits) & kIndexMask); }
int index_of(std::uint64_t t) { return static_cast<int>(t & kIndexMask); }
}  // namespace

void ThreadPool::work(std::uint32_t generation) {
  for (;;) {
    std::uint64_t t = ticket_.load(std::memory_order_acquire);
    if (generation_of(t) != generation || index_of(t) >= count_of(t)) return;
    if (!ticket_.compare_exchange_weak(t, t + 1, std::memory_order_acq_rel)) continue;
    // The job's function was published before its first ticket (release/acquire), and
    // cannot change before this task is done: run() waits for every task first.
    fn_(ctx_, index_of(t));
    done_.fetch_add(1, std::memory_order_release);
  }
}

void ThreadPool::worker_loop() {
  std::uint32_t seen = 0;
  auto current = [this] { return generation_of(ticket_.load()); };
  for (;;) {
    int spins = 0;
    while (current() == seen && !stop_.load(std::memory_order_relaxed)) {
      if (++spins < kSpinRounds) {
        cpu_relax();
        continue;
      }
      std::unique_lock<std::mutex> lock(mutex_);
      sleepers_.fetch_add(1);
      wake_.wait(lock, [&] { return current() != seen || stop_.load(); });
      sleepers_.fetch_sub(1);
    }
    if (stop_.load()) return;
    seen = current();
    work(seen);
  }
}

void ThreadPool::run(int n, void (*fn)(void* ctx, int i), void* ctx) {
  if (threads_.empty() || n <= 1 || static_cast<std::uint64_t>(n) > kIndexMask) {
    for (int i = 0; i < n; ++i) fn(ctx, i);
    return;
  }
  fn_ = fn;
  ctx_ = ctx;
  done_.store(0, std::memory_order_relaxed);
  generation_ = (generation_ + 1) & 0xffffffu;  // 24 bits of the ticket
  ticket_.store(make_ticket(generation_, n));   // seq_cst: before the sleepers_ check below
  if (sleepers_.load() > 0) {
    std::lock_guard<std::mutex> lock(mutex_);
    wake_.notify_all();
  }
  work(generation_);
  // Every task is taken; wait for those still running elsewhere. Yield now and then, in case
  // a worker holding a task was descheduled on a busy machine.
  for (int spins = 0; done_.load(std::memory_order_acquire) < n; ++spins) {
    if (spins % 1024 == 1023)
      std::this_thread::yield();
    else
      cpu_relax();
  }
}

}  // namespace pocketlm
