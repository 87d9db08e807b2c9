// expf over arrays with AVX2 + FMA, reproducing glibc's __expf_fma bit for bit (x86_expf.h).
//
// The algorithm is glibc's sysdeps/ieee754/flt-32/e_expf.c (from Arm's optimized-routines),
// which glibc compiles a second time with -mfma -mavx2 as __expf_fma; this is our own
// vectorization of that arithmetic, operation for operation as this machine's
// libm.so.6 (glibc 2.36) disassembles, in double precision:
//   xd = (double)x
//   kd = fma(InvLn2N, xd, Shift)        ki = bits(kd)     kd = kd - Shift
//   r  = fma(InvLn2N, xd, -kd)          (r in [-1/2, 1/2]: x * 32/ln2 = k + r)
//   s  = asdouble(T[ki % 32] + (ki << 47))                = 2^(k/32)
//   z  = fma(r, C0, C1)    r2 = r * r    y = fma(r, C2, 1.0)    y = fma(z, r2, y)
//   expf(x) = (float)(y * s)            (one rounding to nearest)
// glibc sends |x| >= 88 (abstop = bits(x) >> 20 & 0x7ff above 0x42a), infinities and NaNs to a
// special path (0 for -inf, x + x for NaN/inf, overflow, underflow, else the main path); a
// vector with any lane there computes those lanes with std::exp, exact by construction. The
// fused multiply-adds matter: without them 2 inputs in [-104, 89] round differently (below).
//
// Compiled with -mavx2 -mf16c like avx2.cpp and without -mfma: only the functions marked
// kFma may use FMA instructions, and they run only when the CPU reports FMA (select_exp).
#include "pocketlm/kernels/x86_expf.h"

#include <immintrin.h>

#include <bit>
#include <cfenv>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "pocketlm/base/order_free_sum.h"
#include "pocketlm/kernels/reference.h"

#define POCKETLM_TARGET_FMA __attribute__((target("avx2,fma")))

namespace pocketlm::x86 {

namespace {

// T[i] = bits(2^(i/32) as a double) - (i << 47), i < 32: adding ki << 47 (ki = k + 32 * m in
// the low bits of kd) puts m into the exponent field, so that s = 2^(k/32) exactly as glibc's
// __exp2f_data.tab (EXP2F_TABLE_BITS = 5).
alignas(64) constexpr std::int64_t kTable[32] = {
    0x3ff0000000000000, 0x3fefd9b0d3158574, 0x3fefb5586cf9890f, 0x3fef9301d0125b51,
    0x3fef72b83c7d517b, 0x3fef54873168b9aa, 0x3fef387a6e756238, 0x3fef1e9df51fdee1,
    0x3fef06fe0a31b715, 0x3feef1a7373aa9cb, 0x3feedea64c123422, 0x3feece086061892d,
    0x3feebfdad5362a27, 0x3feeb42b569d4f82, 0x3feeab07dd485429, 0x3feea47eb03a5585,
    0x3feea09e667f3bcd, 0x3fee9f75e8ec5f74, 0x3feea11473eb0187, 0x3feea589994cce13,
    0x3feeace5422aa0db, 0x3feeb737b0cdc5e5, 0x3feec49182a3f090, 0x3feed503b23e255d,
    0x3feee89f995ad3ad, 0x3feeff76f2fb5e47, 0x3fef199bdd85529c, 0x3fef3720dcef9069,
    0x3fef5818dcfba487, 0x3fef7c97337b9b5f, 0x3fefa4afa2a490da, 0x3fefd0765b6e4540,
};
constexpr double kInvLn2N = 0x1.71547652b82fep+5;  // 32 / ln 2 (__exp2f_data.invln2_scaled)
constexpr double kShift = 0x1.8p+52;               // kd + Shift rounds kd to an integer
// 2^(r/32) ~= C0 r^3 + C1 r^2 + C2 r + 1: glibc's exp2f polynomial (__exp2f_data.poly) with
// coefficient i scaled by 1/32^(3-i) (__exp2f_data.poly_scaled).
constexpr double kC0 = 0x1.c6af84b912394p-20;
constexpr double kC1 = 0x1.ebfce50fac4f3p-13;
constexpr double kC2 = 0x1.62e42ff0c52d6p-6;
// bits(x) & 0x7fffffff above this: glibc's special path (abstop > 0x42a, i.e. |x| >= 88, inf, NaN).
constexpr std::int32_t kSpecialAbove = 0x42afffff;

constexpr int kLanes = 8;

// The main path for 4 values widened to double.
POCKETLM_TARGET_FMA inline __m128 exp4(__m256d xd) {
  const __m256d inv_ln2n = _mm256_set1_pd(kInvLn2N);
  const __m256d shift = _mm256_set1_pd(kShift);
  __m256d kd = _mm256_fmadd_pd(inv_ln2n, xd, shift);
  const __m256i ki = _mm256_castpd_si256(kd);
  kd = _mm256_sub_pd(kd, shift);
  const __m256d r = _mm256_fmsub_pd(inv_ln2n, xd, kd);
  const __m256i index = _mm256_and_si256(ki, _mm256_set1_epi64x(31));
  __m256i t = _mm256_i64gather_epi64(reinterpret_cast<const long long*>(kTable), index, 8);
  t = _mm256_add_epi64(t, _mm256_slli_epi64(ki, 47));
  const __m256d s = _mm256_castsi256_pd(t);
  const __m256d z = _mm256_fmadd_pd(r, _mm256_set1_pd(kC0), _mm256_set1_pd(kC1));
  const __m256d r2 = _mm256_mul_pd(r, r);
  __m256d y = _mm256_fmadd_pd(r, _mm256_set1_pd(kC2), _mm256_set1_pd(1.0));
  y = _mm256_fmadd_pd(z, r2, y);
  y = _mm256_mul_pd(y, s);
  return _mm256_cvtpd_ps(y);  // round to nearest, as vcvtsd2ss
}

// out[j] = std::exp(in[j]) for the lanes j set in `mask` (glibc's special path); out of line,
// so that the main loop keeps its constants in registers.
POCKETLM_TARGET_FMA __attribute__((noinline, cold)) void special_lanes(float* out, __m256 in, int mask) {
  float v[kLanes];
  _mm256_storeu_ps(v, in);
  for (int j = 0; j < kLanes; ++j)
    if (mask & (1 << j)) out[j] = std::exp(v[j]);
}

// 8 values in place: the main path for all, then std::exp for the lanes in the special range.
// Returns the 8 results.
POCKETLM_TARGET_FMA inline __m256 exp8(float* x) {
  const __m256 v = _mm256_loadu_ps(x);
  const __m256 lo = _mm256_castps128_ps256(exp4(_mm256_cvtps_pd(_mm256_castps256_ps128(v))));
  const __m256 y = _mm256_insertf128_ps(lo, exp4(_mm256_cvtps_pd(_mm256_extractf128_ps(v, 1))), 1);
  _mm256_storeu_ps(x, y);
  const __m256i abs_bits = _mm256_and_si256(_mm256_castps_si256(v), _mm256_set1_epi32(0x7fffffff));
  const __m256i special = _mm256_cmpgt_epi32(abs_bits, _mm256_set1_epi32(kSpecialAbove));
  if (const int mask = _mm256_movemask_ps(_mm256_castsi256_ps(special))) {
    special_lanes(x, v, mask);
    return _mm256_loadu_ps(x);
  }
  return y;
}

// Adds the 8 values of v to the running sum on grid g in any order (base/order_free_sum.h),
// if that gives the sequential sum's bits: every q = v / u in [0, 2^22) and not a tie, and the
// total below the binade's end. Then g->steps has advanced; else nothing changed.
POCKETLM_TARGET_FMA inline bool add8_order_free(SumGrid* g, __m256 v, __m256 to_steps) {
  const __m256 q = _mm256_mul_ps(v, to_steps);  // exact: a power-of-two scale
  const __m256 fits = _mm256_and_ps(_mm256_cmp_ps(q, _mm256_setzero_ps(), _CMP_GE_OQ),
                                    _mm256_cmp_ps(q, _mm256_set1_ps(SumGrid::kFits), _CMP_LT_OQ));
  const __m256 r = _mm256_round_ps(q, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  const __m256 d = _mm256_sub_ps(q, r);  // exact; +-0.5 on a tie
  const __m256 tie = _mm256_or_ps(_mm256_cmp_ps(d, _mm256_set1_ps(0.5f), _CMP_EQ_OQ),
                                  _mm256_cmp_ps(d, _mm256_set1_ps(-0.5f), _CMP_EQ_OQ));
  if (_mm256_movemask_ps(_mm256_andnot_ps(tie, fits)) != 0xff) return false;
  const __m256i steps = _mm256_cvtps_epi32(r);  // integers below 2^22: exact
  __m128i t = _mm_add_epi32(_mm256_castsi256_si128(steps), _mm256_extracti128_si256(steps, 1));
  t = _mm_add_epi32(t, _mm_shuffle_epi32(t, 0x4e));
  t = _mm_add_epi32(t, _mm_shuffle_epi32(t, 0xb1));
  const std::int32_t total = _mm_cvtsi128_si32(t);
  if (g->steps + total >= SumGrid::kEnd) return false;
  g->steps += total;
  return true;
}

}  // namespace

POCKETLM_TARGET_FMA void exp_fma(float* x, int n) {
  int i = 0;
  for (; i + kLanes <= n; i += kLanes) exp8(x + i);
  for (; i < n; ++i) x[i] = std::exp(x[i]);
}

// exp_sum: x - max and a vector step of expf; the step's values are added to the sum at once
// where their order cannot change it (add8_order_free: no chain of dependent additions), else
// one by one in index order (where the sum crosses a power of two, and while it is below
// 2^-103, e.g. before the first large term).
POCKETLM_TARGET_FMA float exp_sum_fma(float* x, int n, float max) {
  const __m256 m = _mm256_set1_ps(max);
  float sum = 0.0f;
  SumGrid g{};
  bool on_grid = false;  // g holds the sum (and `sum` is stale)
  __m256 to_steps = _mm256_setzero_ps();
  int i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    _mm256_storeu_ps(x + i, _mm256_sub_ps(_mm256_loadu_ps(x + i), m));
    const __m256 y = exp8(x + i);
    if (on_grid && add8_order_free(&g, y, to_steps)) continue;
    if (on_grid) sum = g.value();
    for (int j = i; j < i + kLanes; ++j) sum += x[j];
    on_grid = SumGrid::of(sum, &g);
    to_steps = _mm256_set1_ps(g.to_steps);
  }
  if (on_grid) sum = g.value();
  for (; i < n; ++i) {
    x[i] = std::exp(x[i] - max);
    sum += x[i];
  }
  return sum;
}

// The same arithmetic with 8 doubles per register: half the instructions per value. (AVX-512F
// has the same correctly rounded fused multiply-add, conversions and integer steps.)
#define POCKETLM_TARGET_AVX512 __attribute__((target("avx512f")))
// GCC 12's AVX-512 intrinsics pass _mm512_undefined_*() (a self-initialized variable) as the
// unused merge operand, which -Wmaybe-uninitialized reports once inlined here (Clang has no
// such warning, nor the group).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace {

// The main path for 8 values widened to double; the 32-entry table from 4 registers by two
// two-register permutes (index bits 0-3) and a select on index bit 4.
POCKETLM_TARGET_AVX512 inline __m256 exp8_avx512(__m512d xd, const __m512i* table) {
  const __m512d inv_ln2n = _mm512_set1_pd(kInvLn2N);
  const __m512d shift = _mm512_set1_pd(kShift);
  __m512d kd = _mm512_fmadd_pd(inv_ln2n, xd, shift);
  const __m512i ki = _mm512_castpd_si512(kd);
  kd = _mm512_sub_pd(kd, shift);
  const __m512d r = _mm512_fmsub_pd(inv_ln2n, xd, kd);
  const __m512i low16 = _mm512_permutex2var_epi64(table[0], ki, table[1]);
  const __m512i high16 = _mm512_permutex2var_epi64(table[2], ki, table[3]);
  __m512i t = _mm512_mask_blend_epi64(_mm512_test_epi64_mask(ki, _mm512_set1_epi64(16)), low16, high16);
  t = _mm512_add_epi64(t, _mm512_slli_epi64(ki, 47));
  const __m512d s = _mm512_castsi512_pd(t);
  const __m512d z = _mm512_fmadd_pd(r, _mm512_set1_pd(kC0), _mm512_set1_pd(kC1));
  const __m512d r2 = _mm512_mul_pd(r, r);
  __m512d y = _mm512_fmadd_pd(r, _mm512_set1_pd(kC2), _mm512_set1_pd(1.0));
  y = _mm512_fmadd_pd(z, r2, y);
  y = _mm512_mul_pd(y, s);
  return _mm512_cvtpd_ps(y);  // round to nearest, as vcvtsd2ss
}

// 16 values in place: the main path for all, then std::exp for the lanes in the special range.
// Returns the 16 results.
POCKETLM_TARGET_AVX512 inline __m512 exp16(float* x, const __m512i* table) {
  const __m512 v = _mm512_loadu_ps(x);
  const __m256 lo = exp8_avx512(_mm512_cvtps_pd(_mm512_castps512_ps256(v)), table);
  const __m256 hi = exp8_avx512(_mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1))), table);
  const __m512 y = _mm512_castpd_ps(_mm512_insertf64x4(_mm512_castpd256_pd512(_mm256_castps_pd(lo)),
                                                        _mm256_castps_pd(hi), 1));
  _mm512_storeu_ps(x, y);
  const __m512i abs_bits = _mm512_and_si512(_mm512_castps_si512(v), _mm512_set1_epi32(0x7fffffff));
  if (const unsigned mask = _mm512_cmpgt_epi32_mask(abs_bits, _mm512_set1_epi32(kSpecialAbove))) {
    // glibc's special path for those lanes (rare: |x| >= 88, inf, NaN).
    float v16[16];
    _mm512_storeu_ps(v16, v);
    for (int j = 0; j < 16; ++j)
      if (mask & (1u << j)) x[j] = std::exp(v16[j]);
    return _mm512_loadu_ps(x);
  }
  return y;
}

// add8_order_free for 16 values.
POCKETLM_TARGET_AVX512 inline bool add16_order_free(SumGrid* g, __m512 v, __m512 to_steps) {
  const __m512 q = _mm512_mul_ps(v, to_steps);
  const __mmask16 fits = _mm512_cmp_ps_mask(q, _mm512_setzero_ps(), _CMP_GE_OQ) &
                         _mm512_cmp_ps_mask(q, _mm512_set1_ps(SumGrid::kFits), _CMP_LT_OQ);
  const __m512 r = _mm512_roundscale_ps(q, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  const __m512 d = _mm512_sub_ps(q, r);
  const __mmask16 tie = _mm512_cmp_ps_mask(d, _mm512_set1_ps(0.5f), _CMP_EQ_OQ) |
                        _mm512_cmp_ps_mask(d, _mm512_set1_ps(-0.5f), _CMP_EQ_OQ);
  if ((fits & static_cast<__mmask16>(~tie)) != 0xffff) return false;
  const std::int32_t total = _mm512_reduce_add_epi32(_mm512_cvtps_epi32(r));
  if (g->steps + total >= SumGrid::kEnd) return false;
  g->steps += total;
  return true;
}

struct Table512 {
  __m512i r[4];
  POCKETLM_TARGET_AVX512 Table512()
      : r{_mm512_load_si512(kTable), _mm512_load_si512(kTable + 8), _mm512_load_si512(kTable + 16),
          _mm512_load_si512(kTable + 24)} {}
};

}  // namespace

POCKETLM_TARGET_AVX512 void exp_avx512(float* x, int n) {
  const Table512 table;
  int i = 0;
  for (; i + 16 <= n; i += 16) exp16(x + i, table.r);
  for (; i < n; ++i) x[i] = std::exp(x[i]);
}

// As exp_sum_fma, 16 values per step. (The two loops are the same shape; each is compiled
// for its own instruction set through its target attribute, which one template cannot vary.)
POCKETLM_TARGET_AVX512 float exp_sum_avx512(float* x, int n, float max) {
  const Table512 table;
  const __m512 m = _mm512_set1_ps(max);
  float sum = 0.0f;
  SumGrid g{};
  bool on_grid = false;
  __m512 to_steps = _mm512_setzero_ps();
  int i = 0;
  for (; i + 16 <= n; i += 16) {
    _mm512_storeu_ps(x + i, _mm512_sub_ps(_mm512_loadu_ps(x + i), m));
    const __m512 y = exp16(x + i, table.r);
    if (on_grid && add16_order_free(&g, y, to_steps)) continue;
    if (on_grid) sum = g.value();
    for (int j = i; j < i + 16; ++j) sum += x[j];
    on_grid = SumGrid::of(sum, &g);
    to_steps = _mm512_set1_ps(g.to_steps);
  }
  if (on_grid) sum = g.value();
  for (; i < n; ++i) {
    x[i] = std::exp(x[i] - max);
    sum += x[i];
  }
  return sum;
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

namespace {

// Inputs where the algorithm without fused multiply-adds (each fma a multiply then an add,
// compiled with -ffp-contract=off) gives a float other than this machine's expf: a one-off
// search over every float in [-104, 89] (2,237,661,184 of them on the main path) found these
// two; with the fusions the model matched expf on all of them.
constexpr std::uint32_t kFusedOnly[] = {
    0x4202422f,  // 0x1.04845ep+5:   expf 0x1.f93e38p+46, unfused 0x1.f93e36p+46
    0xc27c65d9,  // -0x1.f8cbb2p+5:  expf 0x1.f45326p-92, unfused 0x1.f45324p-92
};

// glibc's branch points and the values around them, the ends of the float range, subnormals
// and non-finite values (24: the probe pads them to whole 16-lane vectors).
constexpr std::uint32_t kEdges[] = {
    0x42b00000,  // 88: the first special value
    0x42afffff,  // just below 88: main path
    0xc2b00000,  // -88
    0xc2afffff,  // just above -88
    0x42b17217,  // 0x1.62e42ep6 = 88.72283: largest finite expf
    0x42b17218,  // just above: overflows to inf
    0xc2aeac4f,  // -87.33654: expf is the smallest normal float around here
    0xc2ce8ecf,  // -0x1.9d1d9ep6 = -103.27892 (log 2^-149)
    0xc2ce8ed0,
    0xc2cff1b4,  // -0x1.9fe368p6 = -103.97208 (log 2^-150)
    0xc2cff1b5,  // below: underflows to 0
    0x00000000, 0x80000000,  // +-0
    0x00000001, 0x80000001,  // smallest subnormals
    0x007fffff, 0x00800000,  // largest subnormal, smallest normal
    0x7f800000, 0xff800000,  // +-inf
    0x7fc00000, 0xffc00000,  // quiet NaNs
    0x7f800001,              // a signalling NaN
    0x7f7fffff, 0xff7fffff,  // +-FLT_MAX
};

float from_bits(std::uint32_t u) { return std::bit_cast<float>(u); }

// kernel over in[0..n) against scalar, bit for bit.
constexpr int kProbeMax = 512;
bool probe(ExpFn kernel, const float* in, int n, float (*scalar)(float)) {
  float out[kProbeMax];
  if (n > kProbeMax) return false;
  std::memcpy(out, in, static_cast<std::size_t>(n) * sizeof(float));
  kernel(out, n);
  for (int i = 0; i < n; ++i) {
    const float want = scalar(in[i]);
    if (std::memcmp(&out[i], &want, sizeof(float)) != 0) return false;
  }
  return true;
}

float std_exp(float x) { return std::exp(x); }

}  // namespace

bool exp_kernel_matches(ExpFn kernel, float (*scalar)(float)) {
  float buf[kProbeMax];
  int n = 0;
  // The fused-only inputs (padded to a whole vector), then the edges.
  for (std::uint32_t u : kFusedOnly) buf[n++] = from_bits(u);
  while (n % 16 != 0) buf[n++] = 1.0f;  // (a whole vector of either kernel)
  for (std::uint32_t u : kEdges) buf[n++] = from_bits(u);
  while (n % 16 != 0) buf[n++] = 1.0f;  // the vector path, not the scalar tail
  if (!probe(kernel, buf, n, scalar)) return false;
  // 4,096 values evenly spaced over [-104, 89].
  constexpr int kSweep = 4096;
  for (int base = 0; base < kSweep; base += 256) {
    for (int i = 0; i < 256; ++i)
      buf[i] = static_cast<float>(-104.0 + 193.0 * static_cast<double>(base + i) / (kSweep - 1));
    if (!probe(kernel, buf, 256, scalar)) return false;
  }
  // Every binade from the subnormals up to 64, both signs (the sweep has few small values).
  n = 0;
  for (int e = -149; e <= 6; ++e) {
    buf[n++] = std::ldexp(1.3f, e);
    buf[n++] = -std::ldexp(1.7f, e);
  }
  while (n % 16 != 0) buf[n++] = 1.0f;
  return probe(kernel, buf, n, scalar);
}

ExpFn select_exp() {
  static const ExpFn chosen = [] {
    // The probe overflows and underflows on purpose (expf of any float): with the caller's traps
    // masked and its flags as they were afterwards, so that a process running with FP traps on
    // (tests/fp_trap_test.cpp, a PSP-like guard) is not stopped by a one-time CPU check.
    std::fenv_t caller;
    std::feholdexcept(&caller);
    const bool fma = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    ExpFn pick = reference::exp;
    if (fma && __builtin_cpu_supports("avx512f") && exp_kernel_matches(exp_avx512, std_exp))
      pick = exp_avx512;
    else if (fma && exp_kernel_matches(exp_fma, std_exp))
      pick = exp_fma;
    std::fesetenv(&caller);
    return pick;
  }();
  return chosen;
}

ExpSumFn select_exp_sum() {
  // Decided once, like select_exp: avx2's softmax asks for it per attention head and token.
  static const ExpSumFn chosen = [] {
    const ExpFn exp = select_exp();
    if (exp == exp_avx512) return exp_sum_avx512;
    return exp == exp_fma ? exp_sum_fma : reference::exp_sum;
  }();
  return chosen;
}

}  // namespace pocketlm::x86
