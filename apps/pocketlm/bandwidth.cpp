#include "bandwidth.h"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace pocketlm::cli {

namespace {

using Clock = std::chrono::steady_clock;

// Sums n bytes (a multiple of 128) as 64-bit words, four independent chains.
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
// The same with 32-byte loads, 128 bytes per step (the decode kernels' widest loads).
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
#endif

using ReadFn = std::uint64_t (*)(const unsigned char*, std::size_t);

}  // namespace

Bandwidth measure_read_bandwidth(int threads, int mib, int passes) {
  Bandwidth result;
  result.threads = threads;
  result.buffer_mib = mib;
  ReadFn read = read_scalar;
  result.loop = "scalar";
#if defined(__x86_64__)
  if (__builtin_cpu_supports("avx2")) {
    read = read_avx2;
    result.loop = "avx2";
  }
#endif
  const std::size_t bytes = static_cast<std::size_t>(mib) << 20;
  const std::size_t slice = bytes / static_cast<std::size_t>(threads) / 128 * 128;
  // 32-byte aligned loads: the buffer starts on a 64-byte boundary inside a plain vector.
  std::vector<unsigned char> owner(bytes + 64);
  unsigned char* buffer = owner.data() + (64 - reinterpret_cast<std::uintptr_t>(owner.data()) % 64) % 64;
  std::memset(buffer, 1, bytes);  // touch every page before timing
  std::atomic<std::uint64_t> sink{0};
  double best = 0.0;
  for (int pass = 0; pass < passes; ++pass) {
    std::atomic<int> ready{0};
    std::atomic<bool> go{false};
    std::vector<double> ends(static_cast<std::size_t>(threads));
    Clock::time_point start;
    auto worker = [&](int t) {
      ready.fetch_add(1);
      while (!go.load(std::memory_order_acquire)) {
      }
      sink.fetch_xor(read(buffer + static_cast<std::size_t>(t) * slice, slice));
      ends[static_cast<std::size_t>(t)] = std::chrono::duration<double>(Clock::now() - start).count();
    };
    std::vector<std::thread> pool;
    for (int t = 1; t < threads; ++t) pool.emplace_back(worker, t);
    while (ready.load() < threads - 1) {
    }
    start = Clock::now();
    go.store(true, std::memory_order_release);
    ready.fetch_add(1);
    worker(0);
    for (auto& th : pool) th.join();
    double slowest = 0.0;
    for (double e : ends) slowest = e > slowest ? e : slowest;
    const double gbs = static_cast<double>(slice) * threads / slowest / 1e9;
    if (gbs > best) best = gbs;
  }
  result.gb_per_s = best;
  (void)sink.load();
  return result;
}

}  // namespace pocketlm::cli
