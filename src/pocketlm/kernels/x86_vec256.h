// The 256-bit x86 vector width (avx2, avxvnni): Vec256, the 8-lane vector the matmuls of
// kernels/x86_float.h, x86_q80.h and x86_ggml.h and the expf of kernels/x86_exp.h are written
// over. The int8 `Dot` policies live
// with the backend files, each compiled for its own instruction set (so that no VNNI
// instruction can reach a CPU without it): MaddubsDot in kernels/avx2.cpp, VnniDot in
// kernels/avxvnni.cpp.
// Included by the backend files only: everything here has internal linkage, so two backends'
// copies never merge at link time.
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "pocketlm/kernels/x86_float.h"
#include "pocketlm/kernels/x86_ggml.h"
#include "pocketlm/kernels/x86_q80.h"

namespace pocketlm {
namespace {  // NOLINT(google-build-namespaces): see above, one copy per backend file

// 256-bit vectors: 8 lanes, one output row each.
struct Vec256 {
  using I = __m256i;
  using F = __m256;
  static constexpr int kLanes = 8;
  static constexpr int kStreams = 4;      // q80: two runs measured 0.85-0.90x of four
  static constexpr int kGgmlStreams = 2;  // Q8_0/Q4_0: four measured 3 % slower (registers)
  static I splat(std::int32_t v) { return _mm256_set1_epi32(v); }
  static I load(const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }
  // The 4 bytes at p in every 32-bit lane.
  static I splat4(const std::int8_t* p) {
    std::int32_t v;
    std::memcpy(&v, p, 4);
    return _mm256_set1_epi32(v);
  }
  static I and_i(I a, I b) { return _mm256_and_si256(a, b); }
  static I sub_i(I a, I b) { return _mm256_sub_epi32(a, b); }
  static I shift_right4(I v) { return _mm256_srli_epi16(v, 4); }
  // IQ4_XS's grid and scales: a 16-byte table in every 128-bit lane and a byte lookup in it
  // (vpshufb, per lane), fixed shifts of the 32-bit lanes (_32), kLanes uint16 widened to int32.
  static I shift_right2_32(I v) { return _mm256_srli_epi32(v, 2); }
  static I shift_right4_32(I v) { return _mm256_srli_epi32(v, 4); }
  static I shift_left4_32(I v) { return _mm256_slli_epi32(v, 4); }
  static I table16(const void* p) { return _mm256_broadcastsi128_si256(_mm_loadu_si128(static_cast<const __m128i*>(p))); }
  static I lookup16(I table, I index) { return _mm256_shuffle_epi8(table, index); }
  static I or_i(I a, I b) { return _mm256_or_si256(a, b); }
  static I load_u16(const void* p) { return _mm256_cvtepu16_epi32(_mm_loadu_si128(static_cast<const __m128i*>(p))); }
  static F load_fp16(const void* p) { return _mm256_cvtph_ps(_mm_loadu_si128(static_cast<const __m128i*>(p))); }
  static F to_float(I v) { return _mm256_cvtepi32_ps(v); }
  static F zero_f() { return _mm256_setzero_ps(); }
  static F splat_f(float v) { return _mm256_set1_ps(v); }
  static F loadf(const float* p) { return _mm256_loadu_ps(p); }
  static void storef(float* p, F v) { _mm256_storeu_ps(p, v); }
  static F add(F a, F b) { return _mm256_add_ps(a, b); }
  static F sub_f(F a, F b) { return _mm256_sub_ps(a, b); }
  static F mul(F a, F b) { return _mm256_mul_ps(a, b); }

  // glibc's expf (kernels/x86_exp.h): kLanes floats as two halves of doubles (D) and their
  // bits (L). fmadd_d and fmsub_d are FMA instructions: only kernels/x86_expf_fma.cpp, compiled
  // with -mfma and run where the CPU has it, calls them.
  using D = __m256d;
  using L = __m256i;
  static D widen_lo(F v) { return _mm256_cvtps_pd(_mm256_castps256_ps128(v)); }
  static D widen_hi(F v) { return _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)); }
  static F narrow(D lo, D hi) {
    return _mm256_insertf128_ps(_mm256_castps128_ps256(_mm256_cvtpd_ps(lo)), _mm256_cvtpd_ps(hi), 1);
  }
  static D splat_d(double v) { return _mm256_set1_pd(v); }
  static D fmadd_d(D a, D b, D c) { return _mm256_fmadd_pd(a, b, c); }
  static D fmsub_d(D a, D b, D c) { return _mm256_fmsub_pd(a, b, c); }
  static D sub_d(D a, D b) { return _mm256_sub_pd(a, b); }
  static D mul_d(D a, D b) { return _mm256_mul_pd(a, b); }
  static L bits_d(D v) { return _mm256_castpd_si256(v); }
  static D from_bits_d(L v) { return _mm256_castsi256_pd(v); }
  static L add_l(L a, L b) { return _mm256_add_epi64(a, b); }
  static L shift_left47(L v) { return _mm256_slli_epi64(v, 47); }
  // The 32-entry table by index ki % 32: one gather.
  struct ExpTable {
    const std::int64_t* t;
    explicit ExpTable(const std::int64_t* table) : t(table) {}
    L lookup(L ki) const {
      return _mm256_i64gather_epi64(reinterpret_cast<const long long*>(t), _mm256_and_si256(ki, _mm256_set1_epi64x(31)), 8);
    }
  };
  // Bit j: lane j's bits(v) & 0x7fffffff is above `limit`.
  static unsigned abs_bits_above(F v, std::int32_t limit) {
    const I abs_bits = _mm256_and_si256(_mm256_castps_si256(v), _mm256_set1_epi32(0x7fffffff));
    return static_cast<unsigned>(_mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpgt_epi32(abs_bits, _mm256_set1_epi32(limit)))));
  }
  // Whether every lane of q is in [0, fits) and not a tie (q - round(q) = +-0.5); then the sum
  // of the rounded lanes (integers below 2^22: exact) into *total.
  static bool whole_steps(F q, float fits, std::int32_t* total) {
    const F ok = _mm256_and_ps(_mm256_cmp_ps(q, _mm256_setzero_ps(), _CMP_GE_OQ),
                               _mm256_cmp_ps(q, _mm256_set1_ps(fits), _CMP_LT_OQ));
    const F r = _mm256_round_ps(q, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    const F d = _mm256_sub_ps(q, r);  // exact; +-0.5 on a tie
    const F tie = _mm256_or_ps(_mm256_cmp_ps(d, _mm256_set1_ps(0.5f), _CMP_EQ_OQ),
                               _mm256_cmp_ps(d, _mm256_set1_ps(-0.5f), _CMP_EQ_OQ));
    if (_mm256_movemask_ps(_mm256_andnot_ps(tie, ok)) != 0xff) return false;
    const I steps = _mm256_cvtps_epi32(r);
    __m128i t = _mm_add_epi32(_mm256_castsi256_si128(steps), _mm256_extracti128_si256(steps, 1));
    t = _mm_add_epi32(t, _mm_shuffle_epi32(t, 0x4e));
    t = _mm_add_epi32(t, _mm_shuffle_epi32(t, 0xb1));
    *total = _mm_cvtsi128_si32(t);
    return true;
  }
};

}  // namespace
}  // namespace pocketlm
