#include "bandwidth.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace pocketlm::cli {

namespace {

using Clock = std::chrono::steady_clock;

// Sums n bytes (a multiple of 256) as 64-bit words, four independent chains.
std::uint64_t read_scalar(const unsigned char* p, std::size_t n) {
  const auto* w = reinterpret_cast<const std::uint64_t*>(p);
  std::uint64_t a = 0, b = 0, c = 0, d = 0;
  for (std::size_t i = 0; i < n / 8; i += 4) {
    a += w[i];
    b += w[i + 1];
    c += w[i + 2];
    d += w[i + 3];
  }
  return a ^ b ^ c ^ d;
}

#if defined(__x86_64__)
// The same with 32-byte loads, 128 bytes per step.
__attribute__((target("avx2"))) std::uint64_t read_avx2(const unsigned char* p, std::size_t n) {
  __m256i a = _mm256_setzero_si256(), b = a, c = a, d = a;
  for (std::size_t i = 0; i < n; i += 128) {
    a = _mm256_add_epi64(a, _mm256_load_si256(reinterpret_cast<const __m256i*>(p + i)));
    b = _mm256_add_epi64(b, _mm256_load_si256(reinterpret_cast<const __m256i*>(p + i + 32)));
    c = _mm256_add_epi64(c, _mm256_load_si256(reinterpret_cast<const __m256i*>(p + i + 64)));
    d = _mm256_add_epi64(d, _mm256_load_si256(reinterpret_cast<const __m256i*>(p + i + 96)));
  }
  const __m256i s = _mm256_xor_si256(_mm256_xor_si256(a, b), _mm256_xor_si256(c, d));
  return static_cast<std::uint64_t>(_mm256_extract_epi64(s, 0) ^ _mm256_extract_epi64(s, 3));
}

// 64-byte loads (the avx512 backend's), 256 bytes per step.
__attribute__((target("avx512f"))) std::uint64_t read_avx512(const unsigned char* p, std::size_t n) {
  __m512i a = _mm512_setzero_si512(), b = a, c = a, d = a;
  for (std::size_t i = 0; i < n; i += 256) {
    a = _mm512_add_epi64(a, _mm512_load_si512(p + i));
    b = _mm512_add_epi64(b, _mm512_load_si512(p + i + 64));
    c = _mm512_add_epi64(c, _mm512_load_si512(p + i + 128));
    d = _mm512_add_epi64(d, _mm512_load_si512(p + i + 192));
  }
  const __m512i s = _mm512_xor_si512(_mm512_xor_si512(a, b), _mm512_xor_si512(c, d));
  alignas(64) std::uint64_t lanes[8];
  _mm512_store_si512(lanes, s);
  return lanes[0] ^ lanes[7];
}
#endif

using ReadFn = std::uint64_t (*)(const unsigned char*, std::size_t);

constexpr std::size_t kMiB = std::size_t{1} << 20;
constexpr int kFirstMiB = 1, kBaseLastMiB = 128, kMaxMiB = 1024;
constexpr std::size_t kMinPassBytes = 32 * kMiB;
constexpr std::size_t kHugePage = 2 * kMiB;
// The curve has flattened when two sizes in a row each read at most this much slower than the
// size before: on a VM whose host's caches still served part of 128 MiB, the rate fell 46.8,
// 41.2, 36.9 and 35.7 GB/s from 128 MiB to 1 GiB, and 64 and 128 MiB alone could look flat
// (44 and 40.6 GB/s; bench/README.md).
constexpr double kFlatRatio = 1.10;

// Worker threads that live for the whole sweep: each pass they read their slice `reps` times.
// Pass p starts when `generation` becomes p (the workers spin: a pass is a millisecond or two,
// so waking sleeping threads would be most of it).
class Readers {
 public:
  Readers(int threads, ReadFn read) : threads_(threads), read_(read), ends_(static_cast<std::size_t>(threads)) {
    for (int t = 1; t < threads; ++t) pool_.emplace_back([this, t] { loop(t); });
  }
  ~Readers() {
    stop_.store(true, std::memory_order_release);
    generation_.fetch_add(1, std::memory_order_acq_rel);
    for (auto& th : pool_) th.join();
  }

  // Seconds from a common start to the last worker's end of reading buffer[0, bytes) split in
  // `threads` slices, each slice `reps` times.
  double pass(const unsigned char* buffer, std::size_t slice, int reps) {
    buffer_ = buffer;
    slice_ = slice;
    reps_ = reps;
    done_.store(0, std::memory_order_relaxed);
    start_ = Clock::now();
    generation_.fetch_add(1, std::memory_order_acq_rel);
    work(0);
    while (done_.load(std::memory_order_acquire) < threads_) {
    }
    double slowest = 0.0;
    for (double e : ends_) slowest = e > slowest ? e : slowest;
    return slowest;
  }

  std::uint64_t sink() const { return sink_.load(); }

 private:
  void work(int t) {
    std::uint64_t s = 0;
    for (int r = 0; r < reps_; ++r) s ^= read_(buffer_ + static_cast<std::size_t>(t) * slice_, slice_);
    sink_.fetch_xor(s, std::memory_order_relaxed);
    ends_[static_cast<std::size_t>(t)] = std::chrono::duration<double>(Clock::now() - start_).count();
    done_.fetch_add(1, std::memory_order_acq_rel);
  }
  void loop(int t) {
    std::uint64_t seen = 0;
    for (;;) {
      std::uint64_t g;
      while ((g = generation_.load(std::memory_order_acquire)) == seen) {
      }
      seen = g;
      if (stop_.load(std::memory_order_acquire)) return;
      work(t);
    }
  }

  int threads_;
  ReadFn read_;
  std::vector<double> ends_;
  std::vector<std::thread> pool_;
  std::atomic<std::uint64_t> generation_{0};
  std::atomic<int> done_{0};
  std::atomic<bool> stop_{false};
  std::atomic<std::uint64_t> sink_{0};
  const unsigned char* buffer_ = nullptr;
  std::size_t slice_ = 0;
  int reps_ = 0;
  Clock::time_point start_;
};

}  // namespace

void find_limits(BandwidthSweep* s) {
  const SweepPoint& last = s->points.back();
  double plateau = 0.0;
  for (const SweepPoint& p : s->points)
    if (p.mib >= 4 && p.gb_per_s > plateau) plateau = p.gb_per_s;
  const double half = (plateau + last.gb_per_s) / 2;
  s->knee_mib = s->points.front().mib;
  s->llc_gb_per_s = s->points.front().gb_per_s;
  for (const SweepPoint& p : s->points)
    if (p.gb_per_s >= half && &p != &last) {
      s->knee_mib = p.mib;
      s->llc_gb_per_s = p.gb_per_s;
    }
  s->dram_mib = last.mib;
  s->dram_gb_per_s = last.gb_per_s;
}

bool sweep_reached_dram(BandwidthSweep* s) {
  find_limits(s);
  double plateau = 0.0;
  for (const SweepPoint& p : s->points)
    if (p.mib >= 4 && p.gb_per_s > plateau) plateau = p.gb_per_s;
  const std::size_t n = s->points.size();
  const double last = s->points[n - 1].gb_per_s;
  const bool flat = n >= 3 && s->points[n - 2].gb_per_s <= kFlatRatio * last &&
                    s->points[n - 3].gb_per_s <= kFlatRatio * s->points[n - 2].gb_per_s;
  return last <= 0.6 * plateau && s->points[n - 1].mib >= 8 * s->knee_mib && flat;
}

namespace {

// The widest read loop this CPU has, and its name.
ReadFn widest_read(const char** name) {
#if defined(__x86_64__)
  if (__builtin_cpu_supports("avx512f")) {
    *name = "avx512";
    return read_avx512;
  }
  if (__builtin_cpu_supports("avx2")) {
    *name = "avx2";
    return read_avx2;
  }
#endif
  *name = "scalar";
  return read_scalar;
}

// The median rate of `passes` timed passes over buffer[0, bytes), each slice read `reps` times.
double median_rate(Readers& readers, int threads, const unsigned char* buffer, std::size_t bytes, int reps, int passes) {
  const std::size_t slice = bytes / static_cast<std::size_t>(threads) / 256 * 256;
  std::vector<double> rates;
  for (int p = 0; p < passes; ++p) {
    const double s = readers.pass(buffer, slice, reps);
    rates.push_back(static_cast<double>(slice) * threads * reps / s / 1e9);
  }
  std::sort(rates.begin(), rates.end());
  return rates[rates.size() / 2];
}

using Buffer = std::unique_ptr<unsigned char, decltype(&std::free)>;

// `bytes` 2 MiB aligned, every page touched; in huge pages where the kernel does it on request
// (THP "madvise"): the probe then measures the memory, not the page walks of 4 KiB pages, and
// its page faults (several microseconds each in a VM) cost 512x fewer. Null if out of memory.
Buffer touched_buffer(std::size_t bytes) {
  Buffer b(static_cast<unsigned char*>(std::aligned_alloc(kHugePage, bytes)), &std::free);
  if (!b) return b;
  ::madvise(b.get(), bytes, MADV_HUGEPAGE);  // a hint: without it the sweep is the same, slower to set up
  std::memset(b.get(), 1, bytes);
  return b;
}

}  // namespace

struct ReadProbe::Impl {
  int threads;
  std::size_t bytes;
  Buffer buffer;
};

ReadProbe::ReadProbe(int threads, double mib)
    : impl_(std::make_unique<Impl>(Impl{threads, static_cast<std::size_t>(mib) * kMiB,
                                        touched_buffer(static_cast<std::size_t>(mib) * kMiB)})) {}
ReadProbe::~ReadProbe() = default;
bool ReadProbe::ok() const { return impl_->buffer != nullptr && impl_->bytes >= kMinPassBytes; }
double ReadProbe::gb_per_s(int passes) {
  // Workers for this measurement only: they spin between passes, and spinning between decode
  // runs they would take a core from decode.
  const char* name = nullptr;
  Readers readers(impl_->threads, widest_read(&name));
  return median_rate(readers, impl_->threads, impl_->buffer.get(), impl_->bytes, 1, passes > 1 ? passes : 1);
}

double paired_fraction(double bytes_per_token, const std::vector<int>& passes, const std::vector<double>& seconds,
                       const std::vector<double>& probes) {
  std::vector<double> fractions;
  for (std::size_t r = 0; r < passes.size() && r + 1 < probes.size() && r < seconds.size(); ++r)
    if (passes[r] > 0 && seconds[r] > 0)
      fractions.push_back(bytes_per_token * passes[r] / seconds[r] / 1e9 / ((probes[r] + probes[r + 1]) / 2));
  if (fractions.empty()) return 0.0;
  std::sort(fractions.begin(), fractions.end());
  const std::size_t n = fractions.size();
  return n % 2 ? fractions[n / 2] : (fractions[n / 2 - 1] + fractions[n / 2]) / 2;
}

BandwidthSweep sweep_read_bandwidth(int threads, int passes) {
  const Clock::time_point begin = Clock::now();
  BandwidthSweep result;
  result.threads = threads;
  ReadFn read = widest_read(&result.loop);
  Readers readers(threads, read);
  Buffer owner(nullptr, &std::free);
  unsigned char* buffer = nullptr;
  std::size_t have = 0;  // bytes of buffer touched so far
  // A quarter of the machine's memory at most: the probe must not push the model out of it.
  const long pages = ::sysconf(_SC_PHYS_PAGES), page_bytes = ::sysconf(_SC_PAGESIZE);
  const double quarter_mib = pages > 0 && page_bytes > 0 ? static_cast<double>(pages) * page_bytes / 4 / kMiB : kMaxMiB;
  for (int mib = kFirstMiB; mib <= kMaxMiB && (mib <= kBaseLastMiB || mib <= quarter_mib); mib *= 2) {
    const std::size_t bytes = static_cast<std::size_t>(mib) * kMiB;
    if (bytes > have) {
      // One buffer for every size up to 128 MiB (a larger one only if the sweep goes on), every
      // page touched before timing.
      const std::size_t want = bytes > kBaseLastMiB * kMiB ? bytes : kBaseLastMiB * kMiB;
      owner.reset();
      owner = touched_buffer(want);
      buffer = owner.get();
      if (!buffer) break;
      have = want;
    }
    const int reps = bytes >= kMinPassBytes ? 1 : static_cast<int>(kMinPassBytes / bytes);
    // warm: a cache-sized buffer comes from the cache
    readers.pass(buffer, bytes / static_cast<std::size_t>(threads) / 256 * 256, 1);
    result.points.push_back({static_cast<double>(mib), median_rate(readers, threads, buffer, bytes, reps, passes)});
    if (mib >= kBaseLastMiB && sweep_reached_dram(&result)) break;
  }
  if (!result.points.empty()) find_limits(&result);  // empty only if no buffer could be allocated
  (void)readers.sink();
  result.seconds = std::chrono::duration<double>(Clock::now() - begin).count();
  return result;
}

ReadLimit read_limit_for(const BandwidthSweep& sweep, double weight_bytes) {
  if (weight_bytes < sweep.knee_mib * static_cast<double>(kMiB)) return {"llc", sweep.llc_gb_per_s};
  return {"dram", sweep.dram_gb_per_s};
}

}  // namespace pocketlm::cli
