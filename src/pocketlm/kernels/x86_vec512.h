// The 512-bit x86 vector width (avx512, AVX-512F/BW): Vec512, the 16-lane vector the matmuls of
// kernels/x86_float.h, x86_q80.h and x86_ggml.h and the expf of kernels/x86_exp.h are written
// over. Its `Dot` policies live with
// the backend files, each compiled for its own instruction set (so that no VNNI instruction can
// reach a CPU without it): Avx512MaddubsDot (vpmaddubsw, vpmaddwd, vpaddd) in
// kernels/avx512.cpp, Avx512VnniDot (vpdpbusd) in kernels/avx512vnni.cpp.
// Everything here has internal linkage: one copy per including backend file.
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "pocketlm/kernels/x86_float.h"
#include "pocketlm/kernels/x86_ggml.h"
#include "pocketlm/kernels/x86_q80.h"

// GCC 12's AVX-512 conversion intrinsics (inlined in Vec512's members) pass
// _mm512_undefined_ps(), which -Wmaybe-uninitialized reports at every use (as in x86_expf.cpp):
// not a defect of this code. Clang has no such warning (nor the group).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif

namespace pocketlm {
namespace {  // NOLINT(google-build-namespaces): one copy per backend file

// 512-bit vectors: 16 lanes, one output row each.
struct Vec512 {
  using I = __m512i;
  using F = __m512;
  static constexpr int kLanes = 16;
  // Runs of blocks read at once by the q80 and the Q8_0/Q4_0 kernels: one core keeps more
  // cache-line fills in flight with several sequential streams than with one (the hardware
  // prefetcher follows each), which is what decode from DRAM needs.
  static constexpr int kStreams = 4;
  static constexpr int kGgmlStreams = 4;
  static I splat(std::int32_t v) { return _mm512_set1_epi32(v); }
  static I load(const void* p) { return _mm512_loadu_si512(p); }
  // The 4 bytes at p in every 32-bit lane.
  static I splat4(const std::int8_t* p) {
    std::int32_t v;
    std::memcpy(&v, p, 4);
    return _mm512_set1_epi32(v);
  }
  static I and_i(I a, I b) { return _mm512_and_si512(a, b); }
  static I sub_i(I a, I b) { return _mm512_sub_epi32(a, b); }
  static I shift_right4(I v) { return _mm512_srli_epi16(v, 4); }
  // As Vec256's (vpshufb per 128-bit lane: AVX512BW).
  static I shift_right2_32(I v) { return _mm512_srli_epi32(v, 2); }
  static I shift_right4_32(I v) { return _mm512_srli_epi32(v, 4); }
  static I shift_left4_32(I v) { return _mm512_slli_epi32(v, 4); }
  static I table16(const void* p) { return _mm512_broadcast_i32x4(_mm_loadu_si128(static_cast<const __m128i*>(p))); }
  static I lookup16(I table, I index) { return _mm512_shuffle_epi8(table, index); }
  static I or_i(I a, I b) { return _mm512_or_si512(a, b); }
  static I load_u16(const void* p) { return _mm512_cvtepu16_epi32(_mm256_loadu_si256(static_cast<const __m256i*>(p))); }
  static F load_fp16(const void* p) { return _mm512_cvtph_ps(_mm256_loadu_si256(static_cast<const __m256i*>(p))); }
  static F to_float(I v) { return _mm512_cvtepi32_ps(v); }
  static F zero_f() { return _mm512_setzero_ps(); }
  static F splat_f(float v) { return _mm512_set1_ps(v); }
  static F loadf(const float* p) { return _mm512_loadu_ps(p); }
  static void storef(float* p, F v) { _mm512_storeu_ps(p, v); }
  static F add(F a, F b) { return _mm512_add_ps(a, b); }
  static F sub_f(F a, F b) { return _mm512_sub_ps(a, b); }
  static F mul(F a, F b) { return _mm512_mul_ps(a, b); }

  // glibc's expf (kernels/x86_exp.h): kLanes floats as two halves of 8 doubles (D) and their
  // bits (L); AVX-512F has the same correctly rounded fused multiply-add, conversions and
  // integer steps as AVX2 + FMA.
  using D = __m512d;
  using L = __m512i;
  static D widen_lo(F v) { return _mm512_cvtps_pd(_mm512_castps512_ps256(v)); }
  static D widen_hi(F v) { return _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1))); }
  static F narrow(D lo, D hi) {
    return _mm512_castpd_ps(_mm512_insertf64x4(_mm512_castpd256_pd512(_mm256_castps_pd(_mm512_cvtpd_ps(lo))),
                                               _mm256_castps_pd(_mm512_cvtpd_ps(hi)), 1));
  }
  static D splat_d(double v) { return _mm512_set1_pd(v); }
  static D fmadd_d(D a, D b, D c) { return _mm512_fmadd_pd(a, b, c); }
  static D fmsub_d(D a, D b, D c) { return _mm512_fmsub_pd(a, b, c); }
  static D sub_d(D a, D b) { return _mm512_sub_pd(a, b); }
  static D mul_d(D a, D b) { return _mm512_mul_pd(a, b); }
  static L bits_d(D v) { return _mm512_castpd_si512(v); }
  static D from_bits_d(L v) { return _mm512_castsi512_pd(v); }
  static L add_l(L a, L b) { return _mm512_add_epi64(a, b); }
  static L shift_left47(L v) { return _mm512_slli_epi64(v, 47); }
  // The 32-entry table held in 4 registers: two two-register permutes (index bits 0-3) and a
  // select on index bit 4.
  struct ExpTable {
    L r[4];
    explicit ExpTable(const std::int64_t* t)
        : r{_mm512_load_si512(t), _mm512_load_si512(t + 8), _mm512_load_si512(t + 16), _mm512_load_si512(t + 24)} {}
    L lookup(L ki) const {
      const L low16 = _mm512_permutex2var_epi64(r[0], ki, r[1]);
      const L high16 = _mm512_permutex2var_epi64(r[2], ki, r[3]);
      return _mm512_mask_blend_epi64(_mm512_test_epi64_mask(ki, _mm512_set1_epi64(16)), low16, high16);
    }
  };
  // Bit j: lane j's bits(v) & 0x7fffffff is above `limit`.
  static unsigned abs_bits_above(F v, std::int32_t limit) {
    const I abs_bits = _mm512_and_si512(_mm512_castps_si512(v), _mm512_set1_epi32(0x7fffffff));
    return _mm512_cmpgt_epi32_mask(abs_bits, _mm512_set1_epi32(limit));
  }
  // As Vec256's: every lane in [0, fits) and not a tie; the sum of the rounded lanes.
  static bool whole_steps(F q, float fits, std::int32_t* total) {
    const __mmask16 ok = _mm512_cmp_ps_mask(q, _mm512_setzero_ps(), _CMP_GE_OQ) &
                         _mm512_cmp_ps_mask(q, _mm512_set1_ps(fits), _CMP_LT_OQ);
    const F r = _mm512_roundscale_ps(q, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    const F d = _mm512_sub_ps(q, r);
    const __mmask16 tie = _mm512_cmp_ps_mask(d, _mm512_set1_ps(0.5f), _CMP_EQ_OQ) |
                          _mm512_cmp_ps_mask(d, _mm512_set1_ps(-0.5f), _CMP_EQ_OQ);
    if ((ok & static_cast<__mmask16>(~tie)) != 0xffff) return false;
    *total = _mm512_reduce_add_epi32(_mm512_cvtps_epi32(r));
    return true;
  }
};

}  // namespace
}  // namespace pocketlm

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
