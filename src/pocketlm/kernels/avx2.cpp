// The AVX2 backend (x86-64), bit-identical to `reference`:
// - fp32 matmul: weights interleaved by 8 rows (kernels/row_interleave.h); each of the 8
//   lanes is one output row and accumulates w*x in index order with a separate multiply and
//   add (no FMA: a fused multiply-add rounds once and would change the result).
// - q8_0 matmul: the int32 group sums are exact in any order, so they are computed with
//   byte and 16-bit multiply-adds; then, 8 rows at a time, each lane does runq.c's
//   acc += ((float)isum * w_scale) * x_scale, groups in order. For group sizes that are a
//   multiple of 32 the weights are interleaved by 8 rows at load (kernels/q80_interleave.h).
// - attention: scores 8 positions at a time, values 8 dimensions at a time (see below).
// - batched q8_0 matmul (prefill, kernels/batch.h): per 8-row block, 4 tokens share each weight
//   load; each token's lanes do exactly the single-token arithmetic.
// - Q4_0 and Q8_0 (ggml blocks, Q8_0 activations): weights interleaved by 8 rows with 4 bytes of
//   a row per 32-bit lane (quant/block_interleave.h), so that byte multiply-adds against 4
//   activation bytes broadcast to every lane leave each row's int32 block sum in its own lane:
//   the sums are exact in any order, and each lane then does the reference's
//   acc = acc + (float)isum * (d_w * d_x), blocks in order. Q4_0 multiplies the unsigned
//   nibbles (q + 8) and subtracts 8 * (the block's activation sum) afterwards, in integers.
// - f16 matmul: weights interleaved by 8 rows, converted exactly with F16C, then as fp32.
// Compiled with -mavx2 -mf16c (fp16 scales and weights); selected when the CPU reports both
// (kernels/registry.cpp).
#include <immintrin.h>

#include <cmath>
#include <cstring>

#include "pocketlm/kernels/batch.h"
#include "pocketlm/kernels/reference.h"
#include "pocketlm/quant/fp16.h"
#include "pocketlm/quant/q4_0.h"
#include "pocketlm/quant/q8_0.h"
#include "pocketlm/quant/q80.h"

namespace pocketlm {

namespace {

constexpr int kLanes = 8;

// 4 blocks of 8 rows at once: four independent add chains hide the add latency.
void matmul_f32(float* out, const float* x, const float* w, int n, int d) {
  const int full = d / kLanes * kLanes;
  const std::size_t block = static_cast<std::size_t>(kLanes) * n;
  int r = 0;
  for (; r + 4 * kLanes <= full; r += 4 * kLanes) {
    const float* w0 = w + static_cast<std::size_t>(r) * n;
    __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps(), a2 = _mm256_setzero_ps(), a3 = _mm256_setzero_ps();
    for (int j = 0; j < n; ++j) {
      const __m256 xv = _mm256_broadcast_ss(x + j);
      const std::size_t o = static_cast<std::size_t>(j) * kLanes;
      a0 = _mm256_add_ps(a0, _mm256_mul_ps(_mm256_loadu_ps(w0 + o), xv));
      a1 = _mm256_add_ps(a1, _mm256_mul_ps(_mm256_loadu_ps(w0 + block + o), xv));
      a2 = _mm256_add_ps(a2, _mm256_mul_ps(_mm256_loadu_ps(w0 + 2 * block + o), xv));
      a3 = _mm256_add_ps(a3, _mm256_mul_ps(_mm256_loadu_ps(w0 + 3 * block + o), xv));
    }
    _mm256_storeu_ps(out + r, a0);
    _mm256_storeu_ps(out + r + kLanes, a1);
    _mm256_storeu_ps(out + r + 2 * kLanes, a2);
    _mm256_storeu_ps(out + r + 3 * kLanes, a3);
  }
  for (; r < full; r += kLanes) {
    const float* w0 = w + static_cast<std::size_t>(r) * n;
    __m256 a = _mm256_setzero_ps();
    for (int j = 0; j < n; ++j)
      a = _mm256_add_ps(a, _mm256_mul_ps(_mm256_loadu_ps(w0 + static_cast<std::size_t>(j) * kLanes),
                                         _mm256_broadcast_ss(x + j)));
    _mm256_storeu_ps(out + r, a);
  }
  // The d % 8 tail rows are row-major: the reference loop computes them.
  if (full < d) reference::matmul_f32(out + full, x, w + static_cast<std::size_t>(full) * n, n, d - full);
}

// F16 weights interleaved by 8 rows (quant/block_interleave.h: element j of row k at j*8 + k):
// each lane converts its row's half exactly (F16C) and accumulates w*x in index order, a separate
// multiply and add, as the reference does; 2 blocks of 8 rows at once.
void matmul_f16(float* out, const Matrix& w, const Activation& x, int rows) {
  const int n = w.cols;
  const float* xv = x.f32();
  const auto* h = static_cast<const std::uint16_t*>(w.values);
  const int full = w.interleave == kLanes ? rows / kLanes * kLanes : 0;
  const std::size_t block = static_cast<std::size_t>(kLanes) * n;
  int r = 0;
  for (; r + 2 * kLanes <= full; r += 2 * kLanes) {
    const std::uint16_t* w0 = h + static_cast<std::size_t>(r) * n;
    __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();
    for (int j = 0; j < n; ++j) {
      const __m256 xj = _mm256_broadcast_ss(xv + j);
      const std::size_t o = static_cast<std::size_t>(j) * kLanes;
      a0 = _mm256_add_ps(a0, _mm256_mul_ps(_mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w0 + o))), xj));
      a1 = _mm256_add_ps(a1, _mm256_mul_ps(_mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w0 + block + o))), xj));
    }
    _mm256_storeu_ps(out + r, a0);
    _mm256_storeu_ps(out + r + kLanes, a1);
  }
  for (; r < full; r += kLanes) {
    const std::uint16_t* w0 = h + static_cast<std::size_t>(r) * n;
    __m256 a = _mm256_setzero_ps();
    for (int j = 0; j < n; ++j)
      a = _mm256_add_ps(a, _mm256_mul_ps(_mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(
                                             w0 + static_cast<std::size_t>(j) * kLanes))),
                                         _mm256_broadcast_ss(xv + j)));
    _mm256_storeu_ps(out + r, a);
  }
  if (full < rows) reference::matmul_f16(out + full, rows_from(w, full), x, rows - full);
}

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

// int32 partial sums (8 lanes) of 32 products w[j] * x[j]. vpmaddubsw multiplies unsigned by
// signed bytes, so the sign of w moves onto x: |w| * (x * sign(w)). This is exact for every
// int8 w (|-128| = 128 fits an unsigned byte) as long as x is in [-127, 127], which
// quantize_q80_activations guarantees; pair sums stay below 2 * 128 * 127 < 2^15.
inline __m256i dot32(const std::int8_t* w, __m256i x) {
  const __m256i wv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w));
  const __m256i pairs = _mm256_maddubs_epi16(_mm256_abs_epi8(wv), _mm256_sign_epi8(x, wv));
  return _mm256_madd_epi16(pairs, _mm256_set1_epi16(1));
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
  __m256i sums[kLanes];
  for (int k = 0; k < kLanes; ++k) sums[k] = _mm256_setzero_si256();
  for (int j = j0; j < j0 + gs; j += 16)
    for (int k = 0; k < kLanes; ++k)
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
  for (int r = 0; r < full; r += kLanes) {
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

// Group sizes that are a multiple of 32 read weights interleaved by 8 rows
// (kernels/q80_interleave.h): one sequential stream per 8 rows, scales side by side.
int q80_interleave(int group_size) { return group_size % 32 == 0 ? kLanes : 1; }

// Rows [0, full) in 8-row interleaved blocks, group size a multiple of 32.
void matmul_q80_interleaved(float* out, const std::int8_t* xq, const float* xs, const std::int8_t* wq,
                            const float* ws, int n, int full, int gs) {
  const int groups = n / gs;
  for (int r = 0; r < full; r += kLanes) {
    const std::int8_t* wb = wq + static_cast<std::size_t>(r) * n;  // block r / 8
    const float* sb = ws + static_cast<std::size_t>(r) * groups;
    __m256 acc = _mm256_setzero_ps();
    for (int g = 0; g < groups; ++g) {
      const std::int8_t* wg = wb + static_cast<std::size_t>(g) * kLanes * gs;  // 8 rows x gs bytes
      __m256i sums[kLanes];
      for (int k = 0; k < kLanes; ++k) sums[k] = _mm256_setzero_si256();
      for (int j = 0; j < gs; j += 32) {
        const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xq + g * gs + j));
        for (int k = 0; k < kLanes; ++k)
          sums[k] = _mm256_add_epi32(sums[k], dot32(wg + static_cast<std::size_t>(k) * gs + j, x));
      }
      const __m256 isum = _mm256_cvtepi32_ps(sum_lanes_8(sums));
      const __m256 wscale = _mm256_loadu_ps(sb + static_cast<std::size_t>(g) * kLanes);
      acc = _mm256_add_ps(acc, _mm256_mul_ps(_mm256_mul_ps(isum, wscale), _mm256_set1_ps(xs[g])));
    }
    _mm256_storeu_ps(out + r, acc);
  }
}

void matmul_q80(float* out, const std::int8_t* xq, const float* xs, const std::int8_t* wq, const float* ws, int n,
                int d, int gs) {
  const int full = gs % 16 == 0 ? d / kLanes * kLanes : 0;  // other group sizes: all scalar
  if (gs % 32 == 0)
    matmul_q80_interleaved(out, xq, xs, wq, ws, n, full, gs);
  else if (gs % 16 == 0)
    matmul_q80_rows16(out, xq, xs, wq, ws, n, full, gs);
  if (full < d) {
    const int groups = n / gs;
    reference::matmul_q80(out + full, xq, xs, wq + static_cast<std::size_t>(full) * n,
                          ws + static_cast<std::size_t>(full) * groups, n, d - full, gs);
  }
}

// One 8-row interleaved block for kT tokens: each weight chunk is loaded and made absolute
// once and multiplied with every token's activations; each row's int32 sums are folded into
// the tokens' hadd trees as soon as two rows are done, which keeps the live registers few. Per
// token and lane the arithmetic of matmul_q80_interleaved: exact int32 group sums, then
// acc + (isum * w_scale) * x_scale in group order.
template <int kT>
void q80_block(float* const* o, const std::int8_t* const* x, const float* const* s, const std::int8_t* wb,
               const float* sb, int groups, int gs) {
  __m256 acc[kT];
  for (int t = 0; t < kT; ++t) acc[t] = _mm256_setzero_ps();
  const __m256i ones = _mm256_set1_epi16(1);
  for (int g = 0; g < groups; ++g) {
    const std::int8_t* wg = wb + static_cast<std::size_t>(g) * kLanes * gs;
    __m256i pair[kT][4];  // per token: hadd of rows (0,1), (2,3), (4,5), (6,7)
    for (int k = 0; k < kLanes; k += 2) {
      __m256i r0[kT], r1[kT];
      for (int t = 0; t < kT; ++t) r0[t] = r1[t] = _mm256_setzero_si256();
      for (int j = 0; j < gs; j += 32) {
        const __m256i w0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wg + static_cast<std::size_t>(k) * gs + j));
        const __m256i w1 =
            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wg + static_cast<std::size_t>(k + 1) * gs + j));
        const __m256i a0 = _mm256_abs_epi8(w0), a1 = _mm256_abs_epi8(w1);
        for (int t = 0; t < kT; ++t) {
          const __m256i xv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x[t] + g * gs + j));
          r0[t] = _mm256_add_epi32(r0[t], _mm256_madd_epi16(_mm256_maddubs_epi16(a0, _mm256_sign_epi8(xv, w0)), ones));
          r1[t] = _mm256_add_epi32(r1[t], _mm256_madd_epi16(_mm256_maddubs_epi16(a1, _mm256_sign_epi8(xv, w1)), ones));
        }
      }
      for (int t = 0; t < kT; ++t) pair[t][k / 2] = _mm256_hadd_epi32(r0[t], r1[t]);
    }
    const __m256 wscale = _mm256_loadu_ps(sb + static_cast<std::size_t>(g) * kLanes);
    for (int t = 0; t < kT; ++t) {
      // The rest of sum_lanes_8: lane k = row k's group sum.
      const __m256i u0 = _mm256_hadd_epi32(pair[t][0], pair[t][1]);
      const __m256i u1 = _mm256_hadd_epi32(pair[t][2], pair[t][3]);
      const __m256i isum =
          _mm256_add_epi32(_mm256_permute2x128_si256(u0, u1, 0x20), _mm256_permute2x128_si256(u0, u1, 0x31));
      acc[t] = _mm256_add_ps(acc[t], _mm256_mul_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(isum), wscale),
                                                   _mm256_set1_ps(s[t][g])));
    }
  }
  for (int t = 0; t < kT; ++t) _mm256_storeu_ps(o[t], acc[t]);
}

// Tokens per q80_block call: more share each weight load, fewer keep their sums in registers.
constexpr int kBatchTokens = 4;

// The batched q8_0 matmul (kernels/batch.h): for each 8-row block, the tokens kBatchTokens at a time
// (the block, 8 x n bytes, stays in L1 across them). Other layouts take the generic path.
void matmul_q80_batch(float* out, std::size_t out_stride, const Matrix& w, const ActivationBatch& x, int rows) {
  const int gs = w.group, n = w.cols;
  if (w.interleave != kLanes || gs % 32 != 0) {
    matmul_batch_tiled(matmul_q80_entry<matmul_q80>, out, out_stride, w, x, rows);
    return;
  }
  const int groups = n / gs, full = rows / kLanes * kLanes;
  const auto* wq = static_cast<const std::int8_t*>(w.values);
  auto xq = [&](int t) { return static_cast<const std::int8_t*>(x.at(t).values); };
  auto xs = [&](int t) { return x.scales + static_cast<std::size_t>(t) * x.scale_stride; };
  auto o = [&](int t, int r) { return out + static_cast<std::size_t>(t) * out_stride + r; };
  for (int r = 0; r < full; r += kLanes) {
    const std::int8_t* wb = wq + static_cast<std::size_t>(r) * n;
    const float* sb = w.scales + static_cast<std::size_t>(r) * groups;
    int t = 0;
    for (; t + kBatchTokens <= x.count; t += kBatchTokens) {
      float* os[kBatchTokens];
      const std::int8_t* xqs[kBatchTokens];
      const float* xss[kBatchTokens];
      for (int i = 0; i < kBatchTokens; ++i) {
        os[i] = o(t + i, r);
        xqs[i] = xq(t + i);
        xss[i] = xs(t + i);
      }
      q80_block<kBatchTokens>(os, xqs, xss, wb, sb, groups, gs);
    }
    for (; t < x.count; ++t) matmul_q80_interleaved(o(t, r), xq(t), xs(t), wb, sb, n, kLanes, gs);
  }
  if (full < rows) {  // the row-major tail, as matmul_q80 computes it
    for (int t = 0; t < x.count; ++t)
      reference::matmul_q80(o(t, full), xq(t), xs(t), wq + static_cast<std::size_t>(full) * n,
                            w.scales + static_cast<std::size_t>(full) * groups, n, rows - full, gs);
  }
}

// round-half-away-from-zero (C's roundf) of 8 floats, exactly: v - trunc(v) is exact in
// float, and a fraction of magnitude >= 0.5 rounds away from zero.
inline __m256 round_half_away(__m256 v) {
  const __m256 t = _mm256_round_ps(v, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
  const __m256 sign_mask = _mm256_set1_ps(-0.0f);
  const __m256 frac = _mm256_andnot_ps(sign_mask, _mm256_sub_ps(v, t));
  const __m256 away = _mm256_and_ps(_mm256_cmp_ps(frac, _mm256_set1_ps(0.5f), _CMP_GE_OQ),
                                    _mm256_or_ps(_mm256_and_ps(v, sign_mask), _mm256_set1_ps(1.0f)));
  return _mm256_add_ps(t, away);
}

// runq.c's quantize() for groups that are a multiple of 8: max |x| is order-independent,
// x / scale is the same division, and the rounding is roundf's; an all-zero group gets
// scale 0 and zeros (see quant/q80.h).
void quantize_q80(const float* x, int n, int gs, std::int8_t* q, float* s) {
  if (gs % kLanes != 0) {
    quantize_q80_activations(x, n, gs, q, s);
    return;
  }
  const __m256 abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
  for (int g = 0; g < n / gs; ++g) {
    const float* xg = x + g * gs;
    __m256 m = _mm256_setzero_ps();
    // Operand order as the scalar "if (v > wmax) wmax = v": a NaN never becomes the max.
    for (int i = 0; i < gs; i += kLanes) m = _mm256_max_ps(_mm256_and_ps(_mm256_loadu_ps(xg + i), abs_mask), m);
    float lanes[kLanes];
    _mm256_storeu_ps(lanes, m);
    float wmax = 0.0f;
    for (float v : lanes) wmax = v > wmax ? v : wmax;
    const float scale = wmax / 127.0f;
    s[g] = scale;
    std::int8_t* qg = q + g * gs;
    if (scale == 0.0f) {
      for (int i = 0; i < gs; ++i) qg[i] = 0;
      continue;
    }
    const __m256 sv = _mm256_set1_ps(scale);
    for (int i = 0; i < gs; i += kLanes) {
      const __m256i r = _mm256_cvttps_epi32(round_half_away(_mm256_div_ps(_mm256_loadu_ps(xg + i), sv)));
      alignas(32) std::int32_t ints[kLanes];
      _mm256_store_si256(reinterpret_cast<__m256i*>(ints), r);
      for (int k = 0; k < kLanes; ++k) qg[i + k] = clamp_q80_int(ints[k]);
    }
  }
}

// Transposes an 8x8 tile of floats held as 8 rows.
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

// out[0 .. 8*NV) = sum over t in order of att[t] * value_t[off .. off + 8*NV), lane by lane.
template <int NV>
inline void weighted_values(const AttentionArgs& a, const float* att, int positions, std::size_t off, float* out) {
  __m256 acc[NV];
  for (int j = 0; j < NV; ++j) acc[j] = _mm256_setzero_ps();
  for (int p = 0; p < positions; ++p) {
    const float* v = a.value_cache + static_cast<std::size_t>(p) * a.kv_dim + off;
    const __m256 w = _mm256_set1_ps(att[p]);
    for (int j = 0; j < NV; ++j) acc[j] = _mm256_add_ps(acc[j], _mm256_mul_ps(w, _mm256_loadu_ps(v + j * kLanes)));
  }
  for (int j = 0; j < NV; ++j) _mm256_storeu_ps(out + j * kLanes, acc[j]);
}

// Attention, exact: the scores of 8 positions at once (each lane sums q[i] * k_t[i] over i in
// order; the keys of 8 positions come as transposed 8x8 tiles), run.c's softmax, then the weighted
// sum of values with 8 dimensions per vector (each lane adds a_t * v_t[i] over t in order).
void attention(const AttentionArgs& a) {
  const int kv_mul = a.n_heads / a.n_kv_heads;
  const float scale = std::sqrt(static_cast<float>(a.head_size));
  const int head_end = a.head_end < 0 ? a.n_heads : a.head_end;
  const int positions = a.pos + 1;
  const __m256i key_index = _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), _mm256_set1_epi32(a.kv_dim));
  for (int h = a.head_begin; h < head_end; ++h) {
    const float* q = a.q + h * a.head_size;
    float* att = a.att + static_cast<std::size_t>(h) * a.att_stride;
    const std::size_t kv_off = static_cast<std::size_t>(h / kv_mul) * a.head_size;
    int t = 0;
    for (; t + kLanes <= positions; t += kLanes) {
      const float* k = a.key_cache + static_cast<std::size_t>(t) * a.kv_dim + kv_off;
      __m256 score = _mm256_setzero_ps();
      int i = 0;
      // 8 dimensions of 8 positions at a time: load the 8x8 tile of keys and transpose it, so
      // that column c holds dimension i + c of the 8 positions; add them in order of i.
      for (; i + kLanes <= a.head_size; i += kLanes) {
        __m256 col[kLanes];
        for (int p = 0; p < kLanes; ++p) col[p] = _mm256_loadu_ps(k + static_cast<std::size_t>(p) * a.kv_dim + i);
        transpose8(col);
        for (int c = 0; c < kLanes; ++c) score = _mm256_add_ps(score, _mm256_mul_ps(_mm256_set1_ps(q[i + c]), col[c]));
      }
      for (; i < a.head_size; ++i)
        score = _mm256_add_ps(score, _mm256_mul_ps(_mm256_set1_ps(q[i]), _mm256_i32gather_ps(k + i, key_index, 4)));
      _mm256_storeu_ps(att + t, _mm256_div_ps(score, _mm256_set1_ps(scale)));
    }
    for (; t < positions; ++t) {
      const float* k = a.key_cache + static_cast<std::size_t>(t) * a.kv_dim + kv_off;
      float score = 0.0f;
      for (int i = 0; i < a.head_size; ++i) score += q[i] * k[i];
      att[t] = score / scale;
    }
    reference::softmax(att, positions);
    float* xb = a.out + h * a.head_size;
    int i = 0;
    // Up to 6 vectors (48 dimensions) per pass over the positions, so that each position's
    // values are read as one contiguous run; every lane still adds a_t * v_t[i] over t in order.
    for (; i + 6 * kLanes <= a.head_size; i += 6 * kLanes) weighted_values<6>(a, att, positions, kv_off + i, xb + i);
    for (; i + 4 * kLanes <= a.head_size; i += 4 * kLanes) weighted_values<4>(a, att, positions, kv_off + i, xb + i);
    for (; i + 2 * kLanes <= a.head_size; i += 2 * kLanes) weighted_values<2>(a, att, positions, kv_off + i, xb + i);
    for (; i + kLanes <= a.head_size; i += kLanes) weighted_values<1>(a, att, positions, kv_off + i, xb + i);
    for (; i < a.head_size; ++i) {
      float acc = 0.0f;
      for (int p = 0; p < positions; ++p)
        acc += att[p] * a.value_cache[static_cast<std::size_t>(p) * a.kv_dim + kv_off + static_cast<std::size_t>(i)];
      xb[i] = acc;
    }
  }
}


// ---- GGUF block types ----

// Activations to Q8_0 blocks, exactly as quantize_q8_0 (quant/q8_0.h): amax, d = amax / 127,
// id = d ? 1 / d : 0, q = roundf(x * id) with NaN -> 0 and clamped to [-127, 127] in float
// before the conversion (a huge or infinite x * id then gives +-127, as clamp_q80 does).
void quantize_q8_0_act(const float* x, int n, int, void* values, float*) {
  const __m256 abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
  auto* block = static_cast<unsigned char*>(values);
  for (int b = 0; b < n / kQ8_0Block; ++b, block += kQ8_0BlockBytes) {
    const float* xb = x + b * kQ8_0Block;
    __m256 m = _mm256_setzero_ps();
    for (int i = 0; i < kQ8_0Block; i += kLanes) m = _mm256_max_ps(_mm256_and_ps(_mm256_loadu_ps(xb + i), abs_mask), m);
    float lanes[kLanes];
    _mm256_storeu_ps(lanes, m);
    float amax = 0.0f;
    for (float v : lanes) amax = v > amax ? v : amax;
    const float d = amax / 127.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    store_fp16(block, fp32_to_fp16(d));
    const __m256 idv = _mm256_set1_ps(id);
    std::int32_t ints[kQ8_0Block];
    for (int i = 0; i < kQ8_0Block; i += kLanes) {
      __m256 r = round_half_away(_mm256_mul_ps(_mm256_loadu_ps(xb + i), idv));
      r = _mm256_and_ps(r, _mm256_cmp_ps(r, r, _CMP_ORD_Q));  // NaN -> 0
      r = _mm256_min_ps(_mm256_max_ps(r, _mm256_set1_ps(-127.0f)), _mm256_set1_ps(127.0f));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(ints + i), _mm256_cvttps_epi32(r));
    }
    auto* q = reinterpret_cast<std::int8_t*>(block + 2);
    for (int i = 0; i < kQ8_0Block; ++i) q[i] = static_cast<std::int8_t>(ints[i]);
  }
}

// Blocks handled per pass over the rows: their activation scales and sums are computed once.
constexpr int kBlockChunk = 64;

inline std::int32_t load_i32(const void* p) {
  std::int32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

// The exact int32 block sums of N 8-row groups (lane k = row k of each), from their interleaved
// block chunks' values q[j] and the activation block's int8 values xq: the activation bytes are
// broadcast once for all groups.
template <bool kQ4, int N>
inline void block_sums(const unsigned char* const* q, const std::int8_t* xq, __m256i* s) {
  const __m256i ones16 = _mm256_set1_epi16(1);
  __m256i a[N];
  for (int j = 0; j < N; ++j) a[j] = _mm256_setzero_si256();
  if constexpr (kQ4) {
    // 4 groups of 32 bytes: lane k = 4 bytes of row k = weights 4t..4t+3 (low nibbles) and
    // 16+4t..16+4t+3 (high nibbles). Each int16 lane sums at most 8 products of a nibble
    // (<= 15) and an activation (|x| <= 127): |sum| <= 30480, no overflow.
    const __m256i low4 = _mm256_set1_epi8(0x0F);
    for (int t = 0; t < 4; ++t) {
      const __m256i xl = _mm256_set1_epi32(load_i32(xq + 4 * t));
      const __m256i xh = _mm256_set1_epi32(load_i32(xq + 16 + 4 * t));
      for (int j = 0; j < N; ++j) {
        const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q[j] + 32 * t));
        a[j] = _mm256_add_epi16(a[j], _mm256_maddubs_epi16(_mm256_and_si256(v, low4), xl));
        a[j] = _mm256_add_epi16(a[j], _mm256_maddubs_epi16(_mm256_and_si256(_mm256_srli_epi16(v, 4), low4), xh));
      }
    }
    for (int j = 0; j < N; ++j) s[j] = _mm256_madd_epi16(a[j], ones16);
  } else {
    // 8 groups of 32 bytes: lane k = 4 signed bytes of row k. |w| * (x * sign(w)) as in the q80
    // kernel: exact for every int8 w with |x| <= 127.
    for (int t = 0; t < 8; ++t) {
      const __m256i xv = _mm256_set1_epi32(load_i32(xq + 4 * t));
      for (int j = 0; j < N; ++j) {
        const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q[j] + 32 * t));
        a[j] = _mm256_add_epi32(a[j], _mm256_madd_epi16(_mm256_maddubs_epi16(_mm256_abs_epi8(v), _mm256_sign_epi8(xv, v)), ones16));
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
template <bool kQ4>
void matmul_ggml_rows(float* out, const unsigned char* w, const unsigned char* xb, int n, int full) {
  constexpr int kStreams = 2;  // 4 measured 3 % slower (registers)
  constexpr std::size_t kBs = kQ4 ? kQ4_0BlockBytes : kQ8_0BlockBytes;
  const int nb = n / 32;
  const std::size_t row_bytes = static_cast<std::size_t>(nb) * kBs;
  float dx[kBlockChunk];
  std::int32_t xsum8[kBlockChunk];
  const int groups = full / kLanes, run = (groups + kStreams - 1) / kStreams;
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
        row[j] = (real[j] ? gj : g) * kLanes;
        base[j] = w + static_cast<std::size_t>(row[j]) * row_bytes;
        acc[j] = b0 == 0 || !real[j] ? _mm256_setzero_ps() : _mm256_loadu_ps(out + row[j]);
      }
      for (int b = b0; b < b1; ++b) {
        const std::size_t at = static_cast<std::size_t>(b) * kLanes * kBs;
        const unsigned char* q[kStreams];
        for (int j = 0; j < kStreams; ++j) q[j] = base[j] + at + 2 * kLanes;
        const auto* xq = reinterpret_cast<const std::int8_t*>(xb + static_cast<std::size_t>(b) * kQ8_0BlockBytes + 2);
        __m256i sums[kStreams];
        block_sums<kQ4, kStreams>(q, xq, sums);
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

template <bool kQ4>
void matmul_ggml(float* out, const Matrix& w, const Activation& x, int rows) {
  const int full = w.interleave == kLanes ? rows / kLanes * kLanes : 0;
  const auto* xb = static_cast<const unsigned char*>(x.values);
  matmul_ggml_rows<kQ4>(out, static_cast<const unsigned char*>(w.values), xb, w.cols, full);
  if (full < rows) {
    if constexpr (kQ4)
      reference::matmul_q4_0(out + full, rows_from(w, full), x, rows - full);
    else
      reference::matmul_q8_0(out + full, rows_from(w, full), x, rows - full);
  }
}

}  // namespace

const Kernels& avx2_kernels() {
  static const Kernels kAvx2 = [] {
    Kernels k = reference_kernels();
    k.name = "avx2";
    k.matmul[type_index(TensorType::kF32)] = matmul_f32_entry<matmul_f32>;
    k.matmul[type_index(TensorType::kQ80)] = matmul_q80_entry<matmul_q80>;
    k.interleave[type_index(TensorType::kF32)] = fixed_interleave<kLanes>;
    k.interleave[type_index(TensorType::kQ80)] = q80_interleave;
    k.quantize_act[type_index(TensorType::kQ80)] = quantize_q80_entry<quantize_q80>;
    k.attention = attention;
    k.matmul_batch[type_index(TensorType::kQ80)] = matmul_q80_batch;
    k.matmul[type_index(TensorType::kQ8_0)] = matmul_ggml<false>;
    k.matmul[type_index(TensorType::kQ4_0)] = matmul_ggml<true>;
    k.interleave[type_index(TensorType::kQ8_0)] = fixed_interleave<kLanes>;
    k.interleave[type_index(TensorType::kQ4_0)] = fixed_interleave<kLanes>;
    k.quantize_act[type_index(TensorType::kQ8_0)] = quantize_q8_0_act;
    k.matmul[type_index(TensorType::kF16)] = matmul_f16;
    k.interleave[type_index(TensorType::kF16)] = fixed_interleave<kLanes>;
    return k;
  }();
  return kAvx2;
}

}  // namespace pocketlm
