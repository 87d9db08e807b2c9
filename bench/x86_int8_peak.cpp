// The machine's own int8 multiply-add limit with AVX2 instructions alone, as the register-only
// loops the int8 matmuls are made of (no loads but the activation broadcasts a kernel also has),
// so that a kernel's MAC/s can be read as a fraction of what its instruction mix allows here:
//   int8_peak/avx2/sign_trick  the step of every signed-by-signed int8 sum on avx2 (q80, Q8_0:
//                              kernels/avx2.cpp MaddubsDot::int8_add; IQ4_XS's grid_add has the
//                              same four): vpsignb, vpmaddubsw, vpmaddwd, vpaddd per 32 products
//   int8_peak/avx2/unsigned    Q4_0's step, unsigned nibbles by signed bytes: vpmaddubsw and an
//                              int16 vpaddw per 32 products (widened once per block)
// Each runs 8 independent accumulators, 4 activation broadcasts per step as a 4-token batch
// shares one weight vector. Registered where the CPU has AVX2; x86-64 builds only.
#if defined(__x86_64__)
#include <benchmark/benchmark.h>
#include <immintrin.h>

#include <cstdint>

namespace {

constexpr int kSteps = 1024;  // 8 accumulators x 32 products each

// The weights stay in registers; an empty asm makes the weight vector and the activations'
// address opaque on every pass, so the compiler can neither hoist nor merge the products: each
// step broadcasts its own 4 activation bytes, as a kernel does.
__attribute__((target("avx2"))) std::int64_t sign_trick(const std::int8_t* x) {
  __m256i acc[8];
  for (auto& a : acc) a = _mm256_setzero_si256();
  __m256i w = _mm256_set1_epi8(-77);
  const __m256i one = _mm256_set1_epi16(1);
  for (int s = 0; s < kSteps; s += 8) {
    asm volatile("" : "+x"(w), "+r"(x));
    const __m256i aw = _mm256_abs_epi8(w);
    for (int j = 0; j < 8; ++j) {
      const __m256i xv = _mm256_set1_epi32(*reinterpret_cast<const std::int32_t*>(x + 4 * j));
      acc[j] = _mm256_add_epi32(acc[j], _mm256_madd_epi16(_mm256_maddubs_epi16(aw, _mm256_sign_epi8(xv, w)), one));
    }
  }
  __m256i t = acc[0];
  for (int j = 1; j < 8; ++j) t = _mm256_add_epi32(t, acc[j]);
  return _mm256_extract_epi32(t, 0);
}

__attribute__((target("avx2"))) std::int64_t unsigned_by_signed(const std::int8_t* x) {
  __m256i acc[8];
  for (auto& a : acc) a = _mm256_setzero_si256();
  __m256i w = _mm256_set1_epi8(11);
  for (int s = 0; s < kSteps; s += 8) {
    asm volatile("" : "+x"(w), "+r"(x));
    for (int j = 0; j < 8; ++j) {
      const __m256i xv = _mm256_set1_epi32(*reinterpret_cast<const std::int32_t*>(x + 4 * j));
      acc[j] = _mm256_add_epi16(acc[j], _mm256_maddubs_epi16(w, xv));
    }
  }
  __m256i t = acc[0];
  for (int j = 1; j < 8; ++j) t = _mm256_add_epi16(t, acc[j]);
  return _mm256_extract_epi16(t, 0);
}

template <std::int64_t (*kLoop)(const std::int8_t*)>
void BM_Int8Peak(benchmark::State& state) {
  alignas(32) std::int8_t x[32];
  for (int i = 0; i < 32; ++i) x[i] = static_cast<std::int8_t>(3 * i - 20);
  for (auto _ : state) benchmark::DoNotOptimize(kLoop(x));
  state.counters["MAC/s"] = benchmark::Counter(32.0 * kSteps, benchmark::Counter::kIsIterationInvariantRate);
}

int register_peaks() {
  if (!__builtin_cpu_supports("avx2")) return 0;
  benchmark::RegisterBenchmark("int8_peak/avx2/sign_trick", BM_Int8Peak<sign_trick>);
  benchmark::RegisterBenchmark("int8_peak/avx2/unsigned", BM_Int8Peak<unsigned_by_signed>);
  return 0;
}
const int kRegistered = register_peaks();

}  // namespace
#endif
