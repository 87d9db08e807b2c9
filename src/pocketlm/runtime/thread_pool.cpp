#include "pocketlm/runtime/thread_pool.h"

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

void ThreadPool::work(std::uint32_t generation) {
  for (;;) {
    std::uint64_t t = ticket_.load(std::memory_order_acquire);
    if (static_cast<std::uint32_t>(t >> 32) != generation) return;
    const int i = static_cast<int>(t & 0xffffffffu);
    if (i >= n_.load(std::memory_order_relaxed)) return;
    void (*fn)(void*, int) = fn_.load(std::memory_order_relaxed);
    void* ctx = ctx_.load(std::memory_order_relaxed);
    if (!ticket_.compare_exchange_weak(t, t + 1, std::memory_order_acq_rel)) continue;
    fn(ctx, i);
    done_.fetch_add(1, std::memory_order_release);
  }
}

void ThreadPool::worker_loop() {
  std::uint32_t seen = 0;
  auto current = [this] { return static_cast<std::uint32_t>(ticket_.load() >> 32); };
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
  if (threads_.empty() || n <= 1) {
    for (int i = 0; i < n; ++i) fn(ctx, i);
    return;
  }
  fn_.store(fn, std::memory_order_relaxed);
  ctx_.store(ctx, std::memory_order_relaxed);
  n_.store(n, std::memory_order_relaxed);
  done_.store(0, std::memory_order_relaxed);
  ++generation_;
  ticket_.store(static_cast<std::uint64_t>(generation_) << 32);  // seq_cst: before the sleepers_ check
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
