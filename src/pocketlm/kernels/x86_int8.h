// The int8 matmuls of the 256-bit x86 backends (q80 through kernels/x86_q80.h over Vec256;
// Q8_0 and Q4_0 here), written once over a `Dot` policy: the instruction that multiplies unsigned by signed bytes and adds
// each group of 4 products into an int32 lane.
// - MaddubsDot (AVX2): vpmaddubsw to int16 pairs, vpmaddwd to int32, vpaddd.
// - VnniDot (AVX-VNNI, kernels/avxvnni.cpp): vpdpbusd, the same sums in one instruction.
// The int32 group sums are exact either way, so both backends give the bits of `reference`.
// Included by the backend files only, each compiled for its own instruction set: everything
// here has internal linkage, so two backends' copies never merge at link time.
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "pocketlm/kernels/batch.h"
#include "pocketlm/kernels/reference.h"
#include "pocketlm/kernels/x86_q80.h"
#include "pocketlm/quant/fp16.h"
#include "pocketlm/quant/q4_0.h"
#include "pocketlm/quant/q8_0.h"
#include "pocketlm/quant/q80.h"

namespace pocketlm {
namespace {  // NOLINT(google-build-namespaces): see above, one copy per backend file

constexpr int kInt8Lanes = 8;

// 256-bit vectors for kernels/x86_q80.h: 8 lanes, one output row each.
struct Vec256 {
  using I = __m256i;
  using F = __m256;
  static constexpr int kLanes = kInt8Lanes;
  static constexpr int kStreams = 4;
  static I splat(std::int32_t v) { return _mm256_set1_epi32(v); }
  static I load(const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }
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
  // vpmaddubsw's int16 pairs would saturate on (w + 128) * x: no biased form here.
  static constexpr bool kBiased = false;
  static inline __m256i add(__m256i acc, __m256i u, __m256i s) {
    return _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), _mm256_set1_epi16(1)));
  }
  // acc + the int32 sums of 4 adjacent products w[i] * x[i] of two signed byte vectors: the
  // sign of w moves onto x (exact for every int8 w, |-128| = 128 fits an unsigned byte).
  static inline __m256i signed_add(__m256i acc, __m256i w, __m256i x) {
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
  static inline __m256i biased_add(__m256i acc, __m256i w, __m256i x) {
    return add(acc, _mm256_xor_si256(w, _mm256_set1_epi8(static_cast<char>(0x80))), x);
  }
  // |w| * (x * sign(w)): exact for every int8 w while |x| <= 127 (the activations' range).
  static inline __m256i signed_add(__m256i acc, __m256i w, __m256i x) {
    return add(acc, _mm256_abs_epi8(w), _mm256_sign_epi8(x, w));
  }
  // Small sums (MaddubsDot's int16 shortcut): here already int32.
  static inline __m256i add_small(__m256i acc, __m256i u, __m256i s) { return add(acc, u, s); }
  static inline __m256i widen_small(__m256i acc) { return acc; }
};

// Blocks handled per pass over the rows: their activation scales and sums are computed once.
constexpr int kBlockChunk = 64;

// The exact int32 block sums of N 8-row groups (lane k = row k of each), from their interleaved
// block chunks' values q[j] and the activation block's int8 values xq: the activation bytes are
// broadcast once for all groups.
template <class Dot, bool kQ4, int N>
inline void block_sums(const unsigned char* const* q, const std::int8_t* xq, __m256i* s) {
  __m256i a[N];
  for (int j = 0; j < N; ++j) a[j] = _mm256_setzero_si256();
  if constexpr (kQ4) {
    // 4 groups of 32 bytes: lane k = 4 bytes of row k = weights 4t..4t+3 (low nibbles) and
    // 16+4t..16+4t+3 (high nibbles). Each lane's pair sums stay small: at most 8 products of a
    // nibble (<= 15) and an activation (|x| <= 127), |sum| <= 30480 (Dot::add_small).
    const __m256i low4 = _mm256_set1_epi8(0x0F);
    for (int t = 0; t < 4; ++t) {
      const __m256i xl = _mm256_set1_epi32(load_x4(xq + 4 * t));
      const __m256i xh = _mm256_set1_epi32(load_x4(xq + 16 + 4 * t));
      for (int j = 0; j < N; ++j) {
        const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q[j] + 32 * t));
        a[j] = Dot::add_small(a[j], _mm256_and_si256(v, low4), xl);
        a[j] = Dot::add_small(a[j], _mm256_and_si256(_mm256_srli_epi16(v, 4), low4), xh);
      }
    }
    for (int j = 0; j < N; ++j) s[j] = Dot::widen_small(a[j]);
  } else {
    // 8 groups of 32 bytes: lane k = 4 signed bytes of row k. |w| * (x * sign(w)), exact for
    // every int8 w with |x| <= 127, or a biased Dot's (w + 128) * x (the caller subtracts 128 *
    // the activation block's sum).
    for (int t = 0; t < 8; ++t) {
      const __m256i xv = _mm256_set1_epi32(load_x4(xq + 4 * t));
      for (int j = 0; j < N; ++j) {
        const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q[j] + 32 * t));
        a[j] = int8_dot_add<Dot>(a[j], v, xv);
      }
    }
    for (int j = 0; j < N; ++j) s[j] = a[j];
  }
}

// Rows [0, full) of an 8-row interleaved Q4_0 or Q8_0 matrix. The row groups are cut into
// kStreams runs of consecutive groups and one group of each run is computed per pass: several
// weight streams far apart keep more of the memory system busy than one (+7 % decode on
// synth15M Q4_0 for two). A run shorter than the others repeats its last group (computed,
// not stored). Blocks go in chunks of kBlockChunk; a later chunk continues each row's
// accumulator from out[] (a float round trip, exact). Each lane does the reference's
// acc = acc + (float)isum * (d_w * d_x), blocks in order; Q4_0 sums the nibbles (q + 8) and
// subtracts 8 * (the activation block's sum), in integers, a biased Dot's Q8_0 128 * that sum.
template <class Dot, bool kQ4>
void matmul_ggml_rows(float* out, const unsigned char* w, const unsigned char* xb, int n, int full) {
  constexpr int kStreams = 2;  // 4 measured 3 % slower (registers)
  constexpr std::size_t kBs = kQ4 ? kQ4_0BlockBytes : kQ8_0BlockBytes;
  const int nb = n / 32;
  const std::size_t row_bytes = static_cast<std::size_t>(nb) * kBs;
  float dx[kBlockChunk];
  std::int32_t xsum8[kBlockChunk];
  const int groups = full / kInt8Lanes, run = (groups + kStreams - 1) / kStreams;
  for (int b0 = 0; b0 < nb; b0 += kBlockChunk) {
    const int b1 = nb - b0 < kBlockChunk ? nb : b0 + kBlockChunk;
    for (int b = b0; b < b1; ++b) {
      const unsigned char* xblk = xb + static_cast<std::size_t>(b) * kQ8_0BlockBytes;
      dx[b - b0] = fp16_to_fp32(load_fp16(xblk));
      std::int32_t s = 0;
      for (int i = 0; i < 32; ++i) s += static_cast<std::int8_t>(xblk[2 + i]);
      xsum8[b - b0] = kQ4 ? 8 * s : (Dot::kBiased ? 128 * s : 0);
    }
    for (int g = 0; g < run; ++g) {
      int row[kStreams];
      bool real[kStreams];
      const unsigned char* base[kStreams];
      __m256 acc[kStreams];
      for (int j = 0; j < kStreams; ++j) {
        const int gj = g + j * run;
        real[j] = gj < groups;
        row[j] = (real[j] ? gj : g) * kInt8Lanes;
        base[j] = w + static_cast<std::size_t>(row[j]) * row_bytes;
        acc[j] = b0 == 0 || !real[j] ? _mm256_setzero_ps() : _mm256_loadu_ps(out + row[j]);
      }
      for (int b = b0; b < b1; ++b) {
        const std::size_t at = static_cast<std::size_t>(b) * kInt8Lanes * kBs;
        const unsigned char* q[kStreams];
        for (int j = 0; j < kStreams; ++j) q[j] = base[j] + at + 2 * kInt8Lanes;
        const auto* xq = reinterpret_cast<const std::int8_t*>(xb + static_cast<std::size_t>(b) * kQ8_0BlockBytes + 2);
        __m256i sums[kStreams];
        block_sums<Dot, kQ4, kStreams>(q, xq, sums);
        const __m256i corr = _mm256_set1_epi32(xsum8[b - b0]);
        const __m256 dxv = _mm256_set1_ps(dx[b - b0]);
        for (int j = 0; j < kStreams; ++j) {
          const __m256 d = _mm256_mul_ps(_mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(base[j] + at))), dxv);
          acc[j] = _mm256_add_ps(acc[j], _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(sums[j], corr)), d));
        }
      }
      for (int j = 0; j < kStreams; ++j)
        if (real[j]) _mm256_storeu_ps(out + row[j], acc[j]);
    }
  }
}

template <class Dot, bool kQ4>
void matmul_ggml(float* out, const Matrix& w, const Activation& x, int rows) {
  const int full = w.interleave == kInt8Lanes ? rows / kInt8Lanes * kInt8Lanes : 0;
  const auto* xb = static_cast<const unsigned char*>(x.values);
  matmul_ggml_rows<Dot, kQ4>(out, static_cast<const unsigned char*>(w.values), xb, w.cols, full);
  reference::matmul_ggml_tail<kQ4>(out, w, x, full, rows);
}

}  // namespace
}  // namespace pocketlm
