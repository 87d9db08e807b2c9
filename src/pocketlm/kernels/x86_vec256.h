// The 256-bit x86 vector width (avx2, avxvnni): Vec256, the 8-lane vector the matmuls of
// kernels/x86_float.h, x86_q80.h and x86_ggml.h are written over, and the `Dot` policies, the
// instruction that multiplies unsigned by signed bytes and adds each group of 4 products into
// an int32 lane:
// - MaddubsDot (AVX2): vpmaddubsw to int16 pairs, vpmaddwd to int32, vpaddd.
// - VnniDot (AVX-VNNI, kernels/avxvnni.cpp): vpdpbusd, the same sums in one instruction.
// The int32 group sums are exact either way, so both backends give the bits of `reference`.
// Included by the backend files only, each compiled for its own instruction set: everything
// here has internal linkage, so two backends' copies never merge at link time.
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
  static F load_fp16(const void* p) { return _mm256_cvtph_ps(_mm_loadu_si128(static_cast<const __m128i*>(p))); }
  static F to_float(I v) { return _mm256_cvtepi32_ps(v); }
  static F zero_f() { return _mm256_setzero_ps(); }
  static F splat_f(float v) { return _mm256_set1_ps(v); }
  static F loadf(const float* p) { return _mm256_loadu_ps(p); }
  static void storef(float* p, F v) { _mm256_storeu_ps(p, v); }
  static F add(F a, F b) { return _mm256_add_ps(a, b); }
  static F mul(F a, F b) { return _mm256_mul_ps(a, b); }
};

// AVX2: acc + the int32 sums of 4 adjacent products u[i] * s[i]. vpmaddubsw saturates its
// int16 pair sums, so callers keep them below 2^15: |w| * (x * sign(w)) with |x| <= 127 gives
// at most 2 * 128 * 127; nibbles (<= 15) times |x| <= 127 much less.
struct MaddubsDot {
  // int8_add is w * x itself: vpmaddubsw's int16 pairs would saturate on (w + 128) * x.
  static constexpr bool kBiased = false;
  static inline __m256i add(__m256i acc, __m256i u, __m256i s) {
    return _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), _mm256_set1_epi16(1)));
  }
  // acc + the int32 sums of 4 adjacent products w[i] * x[i] of two signed byte vectors: the
  // sign of w moves onto x (exact for every int8 w, |-128| = 128 fits an unsigned byte).
  static inline __m256i int8_add(__m256i acc, __m256i w, __m256i x) {
    return add(acc, _mm256_abs_epi8(w), _mm256_sign_epi8(x, w));
  }
  // For sums known to stay within int16 (Q4_0's nibbles): the pairs accumulate as int16, then
  // widen_small turns the accumulator into int32 lane sums once, at the end.
  static inline __m256i add_small(__m256i acc, __m256i u, __m256i s) {
    return _mm256_add_epi16(acc, _mm256_maddubs_epi16(u, s));
  }
  static inline __m256i widen_small(__m256i acc) { return _mm256_madd_epi16(acc, _mm256_set1_epi16(1)); }
};

// VNNI: vpdpbusd adds each group of 4 products u[i] * s[i] (u unsigned, s signed bytes) straight
// into an int32 lane, without saturating. Dpbusd::add is one of its forms: AVX-VNNI's VEX
// encoding (avxvnni.cpp) or AVX512_VNNI + VL's EVEX one (avx512vnni.cpp), each compiled in its
// own file with its own flags.
template <typename Dpbusd>
struct VnniDot {
  static inline __m256i add(__m256i acc, __m256i u, __m256i s) { return Dpbusd::add(acc, u, s); }
  // acc + the sums of 4 products (w + 128) * x: w's bytes with the top bit flipped are w + 128,
  // unsigned, and vpdpbusd never saturates. The caller removes 128 * (the activations' sum).
  static constexpr bool kBiased = true;
  static inline __m256i int8_add(__m256i acc, __m256i w, __m256i x) {
    return add(acc, _mm256_xor_si256(w, _mm256_set1_epi8(static_cast<char>(0x80))), x);
  }
  // Small sums (MaddubsDot's int16 shortcut): here already int32.
  static inline __m256i add_small(__m256i acc, __m256i u, __m256i s) { return add(acc, u, s); }
  static inline __m256i widen_small(__m256i acc) { return acc; }
};

}  // namespace
}  // namespace pocketlm
