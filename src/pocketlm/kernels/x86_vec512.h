// The 512-bit x86 vector width (avx512, AVX-512F/BW): Vec512, the 16-lane vector the matmuls of
// kernels/x86_float.h, x86_q80.h and x86_ggml.h are written over. Its `Dot` policies live with
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
  static I table16(const void* p) { return _mm512_broadcast_i32x4(_mm_loadu_si128(static_cast<const __m128i*>(p))); }
  static I lookup16(I table, I index) { return _mm512_shuffle_epi8(table, index); }
  static I or_i(I a, I b) { return _mm512_or_si512(a, b); }
  static I shift_right(I v, int n) { return _mm512_srl_epi32(v, _mm_cvtsi32_si128(n)); }
  static I shift_left(I v, int n) { return _mm512_sll_epi32(v, _mm_cvtsi32_si128(n)); }
  static I load_u16(const void* p) { return _mm512_cvtepu16_epi32(_mm256_loadu_si256(static_cast<const __m256i*>(p))); }
  static F load_fp16(const void* p) { return _mm512_cvtph_ps(_mm256_loadu_si256(static_cast<const __m256i*>(p))); }
  static F to_float(I v) { return _mm512_cvtepi32_ps(v); }
  static F zero_f() { return _mm512_setzero_ps(); }
  static F splat_f(float v) { return _mm512_set1_ps(v); }
  static F loadf(const float* p) { return _mm512_loadu_ps(p); }
  static void storef(float* p, F v) { _mm512_storeu_ps(p, v); }
  static F add(F a, F b) { return _mm512_add_ps(a, b); }
  static F mul(F a, F b) { return _mm512_mul_ps(a, b); }
};

}  // namespace
}  // namespace pocketlm

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
