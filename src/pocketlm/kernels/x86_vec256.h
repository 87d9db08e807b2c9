// The 256-bit x86 vector width (avx2, avxvnni): Vec256, the 8-lane vector the matmuls of
// kernels/x86_float.h, x86_q80.h and x86_ggml.h are written over. The int8 `Dot` policies live
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
  // (vpshufb, per lane), 32-bit shifts by a count, kLanes uint16 widened to int32.
  static I table16(const void* p) { return _mm256_broadcastsi128_si256(_mm_loadu_si128(static_cast<const __m128i*>(p))); }
  static I lookup16(I table, I index) { return _mm256_shuffle_epi8(table, index); }
  static I or_i(I a, I b) { return _mm256_or_si256(a, b); }
  static I shift_right(I v, int n) { return _mm256_srl_epi32(v, _mm_cvtsi32_si128(n)); }
  static I shift_left(I v, int n) { return _mm256_sll_epi32(v, _mm_cvtsi32_si128(n)); }
  static I load_u16(const void* p) { return _mm256_cvtepu16_epi32(_mm_loadu_si128(static_cast<const __m128i*>(p))); }
  static F load_fp16(const void* p) { return _mm256_cvtph_ps(_mm_loadu_si128(static_cast<const __m128i*>(p))); }
  static F to_float(I v) { return _mm256_cvtepi32_ps(v); }
  static F zero_f() { return _mm256_setzero_ps(); }
  static F splat_f(float v) { return _mm256_set1_ps(v); }
  static F loadf(const float* p) { return _mm256_loadu_ps(p); }
  static void storef(float* p, F v) { _mm256_storeu_ps(p, v); }
  static F add(F a, F b) { return _mm256_add_ps(a, b); }
  static F mul(F a, F b) { return _mm256_mul_ps(a, b); }
};

}  // namespace
}  // namespace pocketlm
