// The int8 matmuls of the x86 backends (q80, Q8_0, Q4_0; single token and batched), written
// once over a `Dot` policy: the instruction that multiplies unsigned by signed bytes and adds
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
#include "pocketlm/quant/fp16.h"
#include "pocketlm/quant/q4_0.h"
#include "pocketlm/quant/q8_0.h"
#include "pocketlm/quant/q80.h"

namespace pocketlm {
namespace {  // NOLINT(google-build-namespaces): see above, one copy per backend file

constexpr int kInt8Lanes = 8;

inline __m256i load256(const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }
inline std::int32_t load_i32(const void* p) {
  std::int32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

// Transposes an 8x8 tile of floats held as 8 rows (avx2.cpp: attention's key tiles; here:
// weight tiles, as dwords).
inline void transpose8(__m256 r[8]) {
  const __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
  const __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
  const __m256 t4 = _mm256_unpacklo_ps(r[4], r[5]), t5 = _mm256_unpackhi_ps(r[4], r[5]);
  const __m256 t6 = _mm256_unpacklo_ps(r[6], r[7]), t7 = _mm256_unpackhi_ps(r[6], r[7]);
  const __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE);
  const __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE);
  const __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xEE);
  const __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xEE);
  r[0] = _mm256_permute2f128_ps(u0, u4, 0x20);
  r[1] = _mm256_permute2f128_ps(u1, u5, 0x20);
  r[2] = _mm256_permute2f128_ps(u2, u6, 0x20);
  r[3] = _mm256_permute2f128_ps(u3, u7, 0x20);
  r[4] = _mm256_permute2f128_ps(u0, u4, 0x31);
  r[5] = _mm256_permute2f128_ps(u1, u5, 0x31);
  r[6] = _mm256_permute2f128_ps(u2, u6, 0x31);
  r[7] = _mm256_permute2f128_ps(u3, u7, 0x31);
}

// AVX2: acc + the int32 sums of 4 adjacent products u[i] * s[i]. vpmaddubsw saturates its
// int16 pair sums, so callers keep them below 2^15: |w| * (x * sign(w)) with |x| <= 127 gives
// at most 2 * 128 * 127; nibbles (<= 15) times |x| <= 127 much less.
struct MaddubsDot {
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
  // |w| * (x * sign(w)): exact for every int8 w while |x| <= 127 (the activations' range).
  static inline __m256i signed_add(__m256i acc, __m256i w, __m256i x) {
    return add(acc, _mm256_abs_epi8(w), _mm256_sign_epi8(x, w));
  }
  // Small sums (MaddubsDot's int16 shortcut): here already int32.
  static inline __m256i add_small(__m256i acc, __m256i u, __m256i s) { return add(acc, u, s); }
  static inline __m256i widen_small(__m256i acc) { return acc; }
};

// Sum of the 8 int32 lanes of each of v[0..7], as one vector (lane k = sum of v[k]).
inline __m256i sum_lanes_8(const __m256i v[8]) {
  const __m256i t01 = _mm256_hadd_epi32(v[0], v[1]);
  const __m256i t23 = _mm256_hadd_epi32(v[2], v[3]);
  const __m256i t45 = _mm256_hadd_epi32(v[4], v[5]);
  const __m256i t67 = _mm256_hadd_epi32(v[6], v[7]);
  const __m256i u0 = _mm256_hadd_epi32(t01, t23);  // per 128-bit half: rows 0..3
  const __m256i u1 = _mm256_hadd_epi32(t45, t67);  // per 128-bit half: rows 4..7
  return _mm256_add_epi32(_mm256_permute2x128_si256(u0, u1, 0x20), _mm256_permute2x128_si256(u0, u1, 0x31));
}

// int32 partial sums of 16 products, for group sizes that are multiples of 16 but not 32.
inline __m256i dot16(const std::int8_t* w, const std::int8_t* x) {
  const __m256i w16 = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w)));
  const __m256i x16 = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x)));
  return _mm256_madd_epi16(w16, x16);
}

// Rows r..r+7 (row-major, group size a multiple of 16): the int32 sum of the group starting
// at column j0 for each row, as one vector.
inline __m256i group_sums16(const std::int8_t* wr, const std::int8_t* xq, int n, int j0, int gs) {
  __m256i sums[kInt8Lanes];
  for (int k = 0; k < kInt8Lanes; ++k) sums[k] = _mm256_setzero_si256();
  for (int j = j0; j < j0 + gs; j += 16)
    for (int k = 0; k < kInt8Lanes; ++k)
      sums[k] = _mm256_add_epi32(sums[k], dot16(wr + static_cast<std::size_t>(k) * n + j, xq + j));
  return sum_lanes_8(sums);
}

// Rows [0, full) of a row-major matrix, group size a multiple of 16 (but not of 32).
void matmul_q80_rows16(float* out, const std::int8_t* xq, const float* xs, const std::int8_t* wq, const float* ws,
                       int n, int full, int gs) {
  const int groups = n / gs;
  // Scale of group g of row r + k is ws[(r + k) * groups + g]: gathered with these offsets.
  const __m256i scale_index =
      _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), _mm256_set1_epi32(groups));
  for (int r = 0; r < full; r += kInt8Lanes) {
    const std::int8_t* wr = wq + static_cast<std::size_t>(r) * n;
    const float* wsr = ws + static_cast<std::size_t>(r) * groups;
    __m256 acc = _mm256_setzero_ps();
    for (int g = 0; g < groups; ++g) {
      const __m256 isum = _mm256_cvtepi32_ps(group_sums16(wr, xq, n, g * gs, gs));
      const __m256 wscale = _mm256_i32gather_ps(wsr + g, scale_index, 4);
      acc = _mm256_add_ps(acc, _mm256_mul_ps(_mm256_mul_ps(isum, wscale), _mm256_set1_ps(xs[g])));
    }
    _mm256_storeu_ps(out + r, acc);
  }
}

// The exact int32 sums of one group of an 8-row interleaved q80 block (row k's gs bytes at
// wg + k * gs) with the activations xg, as floats (lane k = row k).
template <class Dot>
inline __m256 q80_group_sums(const std::int8_t* wg, const std::int8_t* xg, int gs) {
  __m256i sums[kInt8Lanes];
  for (int k = 0; k < kInt8Lanes; ++k) sums[k] = _mm256_setzero_si256();
  for (int j = 0; j < gs; j += 32) {
    const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xg + j));
    for (int k = 0; k < kInt8Lanes; ++k)
      sums[k] = Dot::signed_add(sums[k], load256(wg + static_cast<std::size_t>(k) * gs + j), x);
  }
  return _mm256_cvtepi32_ps(sum_lanes_8(sums));
}

// Rows [0, full) in 8-row interleaved blocks (avx2.cpp's q80_interleave), group size a multiple
// of 32. The blocks are cut into two runs (the first half and the second) and a block of each
// is computed per pass: two weight streams, and two chains of horizontal sums the core overlaps.
// One chain was latency-bound at about DRAM's rate (28-34 GB/s from L2 on a Zen 4 core, 55 with
// two; bench/README.md). Each lane does acc + (isum * w_scale) * x_scale, groups in order.
template <class Dot>
void matmul_q80_interleaved(float* out, const std::int8_t* xq, const float* xs, const std::int8_t* wq,
                            const float* ws, int n, int full, int gs) {
  const int groups = n / gs, blocks = full / kInt8Lanes, half = blocks / 2;
  const std::size_t block_bytes = static_cast<std::size_t>(kInt8Lanes) * n;
  const std::size_t block_scales = static_cast<std::size_t>(kInt8Lanes) * groups;
  const std::size_t group_bytes = static_cast<std::size_t>(kInt8Lanes) * gs;
  for (int b = 0; b < half; ++b) {
    const std::int8_t* w0 = wq + static_cast<std::size_t>(b) * block_bytes;
    const std::int8_t* w1 = w0 + static_cast<std::size_t>(half) * block_bytes;
    const float* s0 = ws + static_cast<std::size_t>(b) * block_scales;
    const float* s1 = s0 + static_cast<std::size_t>(half) * block_scales;
    __m256 acc0 = _mm256_setzero_ps(), acc1 = acc0;
    for (int g = 0; g < groups; ++g) {
      const __m256 i0 = q80_group_sums<Dot>(w0 + g * group_bytes, xq + g * gs, gs);
      const __m256 i1 = q80_group_sums<Dot>(w1 + g * group_bytes, xq + g * gs, gs);
      const __m256 xg = _mm256_set1_ps(xs[g]);
      acc0 = _mm256_add_ps(acc0, _mm256_mul_ps(_mm256_mul_ps(i0, _mm256_loadu_ps(s0 + g * kInt8Lanes)), xg));
      acc1 = _mm256_add_ps(acc1, _mm256_mul_ps(_mm256_mul_ps(i1, _mm256_loadu_ps(s1 + g * kInt8Lanes)), xg));
    }
    _mm256_storeu_ps(out + b * kInt8Lanes, acc0);
    _mm256_storeu_ps(out + (b + half) * kInt8Lanes, acc1);
  }
  if (2 * half < blocks) {  // an odd block count: the last block alone
    const int r = 2 * half * kInt8Lanes;
    const std::int8_t* wb = wq + static_cast<std::size_t>(2 * half) * block_bytes;
    const float* sb = ws + static_cast<std::size_t>(2 * half) * block_scales;
    __m256 acc = _mm256_setzero_ps();
    for (int g = 0; g < groups; ++g) {
      const __m256 isum = q80_group_sums<Dot>(wb + g * group_bytes, xq + g * gs, gs);
      acc = _mm256_add_ps(acc, _mm256_mul_ps(_mm256_mul_ps(isum, _mm256_loadu_ps(sb + g * kInt8Lanes)),
                                             _mm256_set1_ps(xs[g])));
    }
    _mm256_storeu_ps(out + r, acc);
  }
}

template <class Dot>
void matmul_q80(float* out, const std::int8_t* xq, const float* xs, const std::int8_t* wq, const float* ws, int n,
                int d, int gs) {
  const int full = gs % 16 == 0 ? d / kInt8Lanes * kInt8Lanes : 0;  // other group sizes: all scalar
  if (gs % 32 == 0)
    matmul_q80_interleaved<Dot>(out, xq, xs, wq, ws, n, full, gs);
  else if (gs % 16 == 0)
    matmul_q80_rows16(out, xq, xs, wq, ws, n, full, gs);
  if (full < d) {
    const int groups = n / gs;
    reference::matmul_q80(out + full, xq, xs, wq + static_cast<std::size_t>(full) * n,
                          ws + static_cast<std::size_t>(full) * groups, n, d - full, gs);
  }
}

// Tokens one transposed weight tile serves; their partial int32 group sums (groups of more than
// 32) wait on the stack: 2 KiB.
constexpr int kBatchTokens = 64;

// The batched q8_0 matmul (kernels/batch.h), for each 8-row block and group: the 8 x 32-byte
// tiles of the group are transposed once (8x8 dwords: vector c holds bytes 4c..4c+3 of every
// row, lane k = row k), so that each token's byte multiply-adds against its 4 activation bytes
// broadcast leave row k's sum in lane k: no horizontal sums per token, and the transpose is paid
// once for up to kBatchTokens tokens. Per token and lane the arithmetic of
// matmul_q80_interleaved: exact int32 group sums, then acc + (isum * w_scale) * x_scale in group
// order (acc kept in out between groups: a float round trip, exact). Other layouts take the
// generic path.
template <class Dot>
void matmul_q80_batch(float* out, std::size_t out_stride, const Matrix& w, const ActivationBatch& x, int rows) {
  const int gs = w.group, n = w.cols;
  if (w.interleave != kInt8Lanes || gs % 32 != 0) {
    matmul_batch_tiled(matmul_q80_entry<matmul_q80<Dot>>, out, out_stride, w, x, rows);
    return;
  }
  const int groups = n / gs, full = rows / kInt8Lanes * kInt8Lanes;
  const auto* wq = static_cast<const std::int8_t*>(w.values);
  auto xq = [&](int t) { return static_cast<const std::int8_t*>(x.at(t).values); };
  auto xs = [&](int t) { return x.scales + static_cast<std::size_t>(t) * x.scale_stride; };
  auto o = [&](int t, int r) { return out + static_cast<std::size_t>(t) * out_stride + r; };
  __m256i isum[kBatchTokens];
  for (int r = 0; r < full; r += kInt8Lanes) {
    const std::int8_t* wb = wq + static_cast<std::size_t>(r) * n;
    const float* sb = w.scales + static_cast<std::size_t>(r) * groups;
    for (int t0 = 0; t0 < x.count; t0 += kBatchTokens) {
      const int count = x.count - t0 < kBatchTokens ? x.count - t0 : kBatchTokens;
      for (int g = 0; g < groups; ++g) {
        const std::int8_t* wg = wb + static_cast<std::size_t>(g) * kInt8Lanes * gs;
        const __m256 wscale = _mm256_loadu_ps(sb + static_cast<std::size_t>(g) * kInt8Lanes);
        for (int j = 0; j < gs; j += 32) {
          __m256 tile[kInt8Lanes];  // row k's 32 bytes, then (transposed) dword c of every row
          for (int k = 0; k < kInt8Lanes; ++k)
            tile[k] = _mm256_castsi256_ps(load256(wg + static_cast<std::size_t>(k) * gs + j));
          transpose8(tile);
          __m256i wt[kInt8Lanes], wa[kInt8Lanes];
          for (int c = 0; c < kInt8Lanes; ++c) {
            wt[c] = _mm256_castps_si256(tile[c]);
            wa[c] = _mm256_abs_epi8(wt[c]);
          }
          const bool first = j == 0, last = j + 32 == gs;
          for (int t = 0; t < count; ++t) {
            const std::int8_t* xj = xq(t0 + t) + g * gs + j;
            // Two chains of multiply-adds (int32 sums are exact in any order).
            __m256i even = first ? _mm256_setzero_si256() : isum[t], odd = _mm256_setzero_si256();
            for (int c = 0; c < kInt8Lanes; c += 2) {
              even = Dot::add(even, wa[c], _mm256_sign_epi8(_mm256_set1_epi32(load_i32(xj + 4 * c)), wt[c]));
              odd = Dot::add(odd, wa[c + 1], _mm256_sign_epi8(_mm256_set1_epi32(load_i32(xj + 4 * c + 4)), wt[c + 1]));
            }
            const __m256i sum = _mm256_add_epi32(even, odd);
            if (!last) {
              isum[t] = sum;
              continue;
            }
            float* ot = o(t0 + t, r);
            const __m256 acc = g == 0 ? _mm256_setzero_ps() : _mm256_loadu_ps(ot);
            _mm256_storeu_ps(ot, _mm256_add_ps(acc, _mm256_mul_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(sum), wscale),
                                                                  _mm256_set1_ps(xs(t0 + t)[g]))));
          }
        }
      }
    }
  }
  if (full < rows) {  // the row-major tail, as matmul_q80 computes it
    for (int t = 0; t < x.count; ++t)
      reference::matmul_q80(o(t, full), xq(t), xs(t), wq + static_cast<std::size_t>(full) * n,
                            w.scales + static_cast<std::size_t>(full) * groups, n, rows - full, gs);
  }
}

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
      const __m256i xl = _mm256_set1_epi32(load_i32(xq + 4 * t));
      const __m256i xh = _mm256_set1_epi32(load_i32(xq + 16 + 4 * t));
      for (int j = 0; j < N; ++j) {
        const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q[j] + 32 * t));
        a[j] = Dot::add_small(a[j], _mm256_and_si256(v, low4), xl);
        a[j] = Dot::add_small(a[j], _mm256_and_si256(_mm256_srli_epi16(v, 4), low4), xh);
      }
    }
    for (int j = 0; j < N; ++j) s[j] = Dot::widen_small(a[j]);
  } else {
    // 8 groups of 32 bytes: lane k = 4 signed bytes of row k. |w| * (x * sign(w)) as in the q80
    // kernel: exact for every int8 w with |x| <= 127.
    for (int t = 0; t < 8; ++t) {
      const __m256i xv = _mm256_set1_epi32(load_i32(xq + 4 * t));
      for (int j = 0; j < N; ++j) {
        const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q[j] + 32 * t));
        a[j] = Dot::signed_add(a[j], v, xv);
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
// subtracts 8 * (the activation block's sum), in integers.
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
      xsum8[b - b0] = kQ4 ? 8 * s : 0;
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
