// The NEON backend (AArch64, where Advanced SIMD is always present), bit-identical to
// `reference`:
// - fp32 matmul: weights interleaved by 4 rows (quant/row_interleave.h); each of the 4
//   lanes of a q-register is one output row and accumulates w*x in index order with a
//   separate multiply (vmulq) and add (vaddq). Never vfmaq/vmlaq: a fused multiply-add rounds
//   once and would change the result. The library is built with -ffp-contract=off, so the
//   compiler does not fuse them either.
// - q8_0 matmul: the int32 group sums are exact in any order, so they are computed with
//   widening byte multiplies (vmull_s8, |product| <= 2^14 fits int16) and pairwise widening
//   adds into int32 (vpadalq_s16); no dot-product extension needed. Then, 4 rows at a time,
//   each lane does runq.c's acc += ((float)isum * w_scale) * x_scale, groups in order.
// - Q4_0 and Q8_0: weights interleaved by 4 rows with 4 bytes of a row side by side
//   (quant/block_interleave.h): widening byte multiplies against 4 activation bytes repeated in
//   every lane, pairwise widening adds, so lane k ends with row k's exact int32 block sum (Q4_0
//   multiplies the nibbles q + 8 and subtracts 8 * the activation block's sum); then each lane
//   does the reference's acc = acc + (float)isum * (d_w * d_x), blocks in order.
// - IQ4_XS: the same 4-row interleave; the nibbles become grid values through a byte shuffle
//   (vqtbl1q_s8) of the 16-entry grid, then as Q4_0 (matmul_iq4_xs_rows).
// - Batched prefill (kernels/batch.h) for q80, Q8_0 and Q4_0: the rows in tiles of
//   batch_tile_rows (they stay in cache while the tokens pass), and in each tile 4 tokens at a
//   time share every weight load (and Q4_0's nibble split); per token and lane the arithmetic
//   of the one-token kernel above, so the bits are its bits.
// Ragged shapes (rows not a multiple of 4, group sizes not a multiple of 16) use the
// reference loops. Selected by default on AArch64 (kernels/registry.cpp).
#include <arm_neon.h>

#include <cstddef>
#include <cstring>

#include "pocketlm/kernels/batch.h"
#include "pocketlm/kernels/interleave4_ggml.h"
#include "pocketlm/kernels/reference.h"
#include "pocketlm/quant/fp16.h"
#include "pocketlm/quant/iq4_xs.h"
#include "pocketlm/quant/q4_0.h"
#include "pocketlm/quant/q8_0.h"
#include "pocketlm/quant/q80.h"

namespace pocketlm {

namespace {

constexpr int kLanes = 4;

// One step of a lane-per-row accumulation: acc + w * x, rounded twice as run.c does.
inline float32x4_t mul_add(float32x4_t acc, float32x4_t w, float32x4_t x) {
  return vaddq_f32(acc, vmulq_f32(w, x));
}

// 4 blocks of 4 rows at once: four independent add chains hide the add latency.
void matmul_f32(float* out, const float* x, const float* w, int n, int d) {
  const int full = d / kLanes * kLanes;
  const std::size_t block = static_cast<std::size_t>(kLanes) * n;
  int r = 0;
  for (; r + 4 * kLanes <= full; r += 4 * kLanes) {
    const float* w0 = w + static_cast<std::size_t>(r) * n;
    const float* w1 = w0 + block;
    const float* w2 = w1 + block;
    const float* w3 = w2 + block;
    float32x4_t a0 = vdupq_n_f32(0.0f), a1 = vdupq_n_f32(0.0f), a2 = vdupq_n_f32(0.0f), a3 = vdupq_n_f32(0.0f);
    for (int j = 0; j < n; ++j) {
      const float32x4_t xv = vdupq_n_f32(x[j]);
      const std::size_t o = static_cast<std::size_t>(j) * kLanes;
      a0 = mul_add(a0, vld1q_f32(w0 + o), xv);
      a1 = mul_add(a1, vld1q_f32(w1 + o), xv);
      a2 = mul_add(a2, vld1q_f32(w2 + o), xv);
      a3 = mul_add(a3, vld1q_f32(w3 + o), xv);
    }
    vst1q_f32(out + r, a0);
    vst1q_f32(out + r + kLanes, a1);
    vst1q_f32(out + r + 2 * kLanes, a2);
    vst1q_f32(out + r + 3 * kLanes, a3);
  }
  for (; r < full; r += kLanes) {
    const float* w0 = w + static_cast<std::size_t>(r) * n;
    float32x4_t a = vdupq_n_f32(0.0f);
    for (int j = 0; j < n; ++j)
      a = mul_add(a, vld1q_f32(w0 + static_cast<std::size_t>(j) * kLanes), vdupq_n_f32(x[j]));
    vst1q_f32(out + r, a);
  }
  // The d % 4 tail rows are row-major: the reference loop computes them.
  if (full < d) reference::matmul_f32(out + full, x, w + static_cast<std::size_t>(full) * n, n, d - full);
}

// acc (4 x int32) += the 16 products w[j] * x[j], exactly: each int8 product fits int16
// (|-128 * -128| = 2^14), and vpadalq_s16 adds adjacent pairs of them into int32 lanes.
inline int32x4_t dot16(int32x4_t acc, int8x16_t w, int8x16_t x) {
  acc = vpadalq_s16(acc, vmull_s8(vget_low_s8(w), vget_low_s8(x)));
  return vpadalq_s16(acc, vmull_high_s8(w, x));
}

// Group g's scales of rows r..r+3 (row r's at wsr, the rows `groups` apart), one per lane.
inline float32x4_t row_scales(const float* wsr, std::size_t groups, int g) {
  float32x4_t s = vdupq_n_f32(wsr[g]);
  s = vsetq_lane_f32(wsr[groups + g], s, 1);
  s = vsetq_lane_f32(wsr[2 * groups + g], s, 2);
  return vsetq_lane_f32(wsr[3 * groups + g], s, 3);
}

// Tokens that share each weight load in the batched kernels: 4 tokens x 4 rows of int32 sums
// are 16 of the 32 vector registers.
constexpr int kBatchTokens = 4;

// Rows r..r+3 (row-major from wr, stride n; row r's scales at wsr, `groups` apart) for T tokens
// (token i: values xq[i], scales xs[i], outputs o[i][0..4)): each 16 weight bytes of each row
// are loaded once for the T tokens. Per token and lane, runq.c's
// acc = acc + ((float)isum * w_scale) * x_scale, groups in order. gs is a multiple of 16.
// Always inlined: GCC called decode's copy once per 4 rows, 8 % more instructions a synth15M
// token (qemu-aarch64, bench/device/insn_profile.c).
template <int T>
[[gnu::always_inline]] inline void q80_quad(float* const* o, const std::int8_t* wr, const float* wsr,
                                            const std::int8_t* const* xq, const float* const* xs, std::size_t n,
                                            int groups, int gs) {
  float32x4_t acc[T];
  for (int i = 0; i < T; ++i) acc[i] = vdupq_n_f32(0.0f);
  for (int g = 0; g < groups; ++g) {
    int32x4_t s[T][kLanes];
    for (auto& si : s)
      for (auto& v : si) v = vdupq_n_s32(0);
    for (int j = g * gs; j < (g + 1) * gs; j += 16) {
      int8x16_t wv[kLanes];
      for (int k = 0; k < kLanes; ++k) wv[k] = vld1q_s8(wr + k * n + static_cast<std::size_t>(j));
      for (int i = 0; i < T; ++i) {
        const int8x16_t x = vld1q_s8(xq[i] + j);
        for (int k = 0; k < kLanes; ++k) s[i][k] = dot16(s[i][k], wv[k], x);
      }
    }
    const float32x4_t wscale = row_scales(wsr, static_cast<std::size_t>(groups), g);
    for (int i = 0; i < T; ++i) {
      // Pairwise adds: lane k is the sum of the 4 lanes of s[i][k] (integer, exact).
      const int32x4_t isum = vpaddq_s32(vpaddq_s32(s[i][0], s[i][1]), vpaddq_s32(s[i][2], s[i][3]));
      acc[i] = vaddq_f32(acc[i], vmulq_f32(vmulq_f32(vcvtq_f32_s32(isum), wscale), vdupq_n_f32(xs[i][g])));
    }
  }
  for (int i = 0; i < T; ++i) vst1q_f32(o[i], acc[i]);
}

void matmul_q80(float* out, const std::int8_t* xq, const float* xs, const std::int8_t* wq, const float* ws, int n,
                int d, int gs) {
  const int full = gs % 16 == 0 ? d / kLanes * kLanes : 0;  // other group sizes: all scalar
  const int groups = n / gs;
  const std::size_t sn = static_cast<std::size_t>(n), sg = static_cast<std::size_t>(groups);
  for (int r = 0; r < full; r += kLanes) {
    float* o = out + r;
    q80_quad<1>(&o, wq + static_cast<std::size_t>(r) * sn, ws + static_cast<std::size_t>(r) * sg, &xq, &xs, sn,
                groups, gs);
  }
  if (full < d) {
    reference::matmul_q80(out + full, xq, xs, wq + static_cast<std::size_t>(full) * sn,
                          ws + static_cast<std::size_t>(full) * sg, n, d - full, gs);
  }
}

// The batched kernels' loop: quad(r, t, m) for every 4 rows r of each tile and tokens t..t+m-1
// (kernels/batch.h).
template <class Quad>
void over_row_tiles(int full, int count, int tile_rows, Quad&& quad) {
  over_tiles_and_token_groups<kBatchTokens>(full, count, tile_rows, [&](int r0, int r1, int t, int m) {
    for (int r = r0; r < r1; r += kLanes) quad(r, t, m);
  });
}

void matmul_q80_batch(float* out, std::size_t out_stride, const Matrix& w, const ActivationBatch& x, int rows) {
  if (w.group % 16 != 0) {  // the one-token kernel's all-scalar group sizes
    matmul_batch_tiled(matmul_q80_entry<matmul_q80>, out, out_stride, w, x, rows);
    return;
  }
  const int full = rows / kLanes * kLanes, groups = w.cols / w.group;
  const std::size_t sn = static_cast<std::size_t>(w.cols), sg = static_cast<std::size_t>(groups);
  const auto* wq = static_cast<const std::int8_t*>(w.values);
  over_row_tiles(full, x.count, batch_tile_rows(w), [&](int r, int t, int m) {
    float* o[kBatchTokens];
    const std::int8_t* xq[kBatchTokens];
    const float* xs[kBatchTokens];
    for (int i = 0; i < m; ++i) {
      const Activation a = x.at(t + i);
      o[i] = out + static_cast<std::size_t>(t + i) * out_stride + r;
      xq[i] = static_cast<const std::int8_t*>(a.values);
      xs[i] = a.scales;
    }
    const std::int8_t* wr = wq + static_cast<std::size_t>(r) * sn;
    const float* wsr = w.scales + static_cast<std::size_t>(r) * sg;
    if (m == kBatchTokens)
      q80_quad<kBatchTokens>(o, wr, wsr, xq, xs, sn, groups, w.group);
    else
      q80_quad<1>(o, wr, wsr, xq, xs, sn, groups, w.group);
  });
  for (int t = 0; t < x.count; ++t)  // the row-major tail, as matmul_q80 computes it
    reference::matmul_q80_tail(out + static_cast<std::size_t>(t) * out_stride, w, x.at(t), full, rows);
}

// ---- GGUF block types ----

inline int8x16_t repeat4(const std::int8_t* p) {
  std::uint32_t v;
  std::memcpy(&v, p, 4);
  return vreinterpretq_s8_u32(vdupq_n_u32(v));
}

// Lanes (r0 b0..b3, r1 b0..b3) of a vector of 8 int16 products summed per row into int32 pairs,
// then pairwise: lane k of the result is the sum over row k.
inline int32x4_t rows_of(int32x4_t r01, int32x4_t r23) { return vpaddq_s32(r01, r23); }

// The 4 rows' fp16 scales at p (8 bytes, any alignment) as floats: FCVTL converts every fp16
// exactly, as fp16_to_fp32 does, in two instructions instead of a scalar routine per row.
inline float32x4_t fp16x4_to_fp32(const unsigned char* p) { return vcvt_f32_f16(vreinterpret_f16_u8(vld1_u8(p))); }

// Blocks per pass over the rows: their activation terms are made once per pass, not per 4 rows.
constexpr int kGgmlPassBlocks = 64;

// The scales of one token's Q8_0 activation blocks [b0, b1) (xb): dx[b - b0].
inline void block_scales(const unsigned char* xb, int b0, int b1, float* dx) {
  for (int b = b0; b < b1; ++b) dx[b - b0] = fp16_to_fp32(load_fp16(xb + static_cast<std::size_t>(b) * kQ8_0BlockBytes));
}

// The activation terms of one token's blocks [b0, b1): dx as block_scales and, for Q4_0,
// corr[b - b0] = 8 * the block's sum (the nibbles' offset, the same for every row), two
// across-vector adds (the batched slot makes them again for every tile of rows).
template <bool kQ4>
inline void ggml_pass_terms(const unsigned char* xb, int b0, int b1, float* dx, std::int32_t* corr) {
  block_scales(xb, b0, b1, dx);
  if constexpr (kQ4)
    for (int b = b0; b < b1; ++b) {
      const auto* xq = reinterpret_cast<const std::int8_t*>(xb + static_cast<std::size_t>(b) * kQ8_0BlockBytes + 2);
      corr[b - b0] = 8 * (vaddlvq_s8(vld1q_s8(xq)) + vaddlvq_s8(vld1q_s8(xq + 16)));
    }
}

// Blocks [b0, b1) of one interleaved group of 4 rows (from base) for T tokens (token i: Q8_0
// blocks xb[i], outputs o[i][0..4), its activation terms at dx and corr + i * kGgmlPassBlocks):
// each 16 weight bytes are loaded, and Q4_0's nibbles split, once for the T tokens. Per token
// and block, lane k gets row k's exact int32 sum; then the reference's
// acc = acc + (float)(isum - corr) * (d_w * d_x), blocks in order, acc starting at 0 (b0 = 0)
// or from o[i] (a float round trip, exact).
template <bool kQ4, int T>
void ggml_quad(float* const* o, const unsigned char* base, const unsigned char* const* xb, int b0, int b1,
               const float* dx, const std::int32_t* corr) {
  constexpr std::size_t kBs = kQ4 ? kQ4_0BlockBytes : kQ8_0BlockBytes;
  const uint8x16_t low4 = vdupq_n_u8(0x0F);
  float32x4_t acc[T];
  for (int i = 0; i < T; ++i) acc[i] = b0 == 0 ? vdupq_n_f32(0.0f) : vld1q_f32(o[i]);
  for (int b = b0; b < b1; ++b) {
    const unsigned char* chunk = base + static_cast<std::size_t>(b) * kLanes * kBs;
    const unsigned char* q = chunk + 2 * kLanes;
    const std::size_t at = static_cast<std::size_t>(b) * kQ8_0BlockBytes;  // the activation block
    int32x4_t s01[T], s23[T];  // pair sums of rows 0,1 and 2,3
    for (int i = 0; i < T; ++i) s01[i] = s23[i] = vdupq_n_s32(0);
    if constexpr (kQ4) {
      for (int c = 0; c < 4; ++c) {
        const uint8x16_t v = vld1q_u8(q + 16 * c);
        const int8x16_t lo = vreinterpretq_s8_u8(vandq_u8(v, low4));
        const int8x16_t hi = vreinterpretq_s8_u8(vshrq_n_u8(v, 4));
        for (int i = 0; i < T; ++i) {
          const auto* xq = reinterpret_cast<const std::int8_t*>(xb[i] + at + 2);
          const int8x16_t xl = repeat4(xq + 4 * c), xh = repeat4(xq + 16 + 4 * c);
          // nibble * x fits int16 (<= 15 * 127); two of them too.
          s01[i] = vpadalq_s16(s01[i], vaddq_s16(vmull_s8(vget_low_s8(lo), vget_low_s8(xl)),
                                                 vmull_s8(vget_low_s8(hi), vget_low_s8(xh))));
          s23[i] = vpadalq_s16(s23[i], vaddq_s16(vmull_high_s8(lo, xl), vmull_high_s8(hi, xh)));
        }
      }
    } else {
      for (int c = 0; c < 8; ++c) {
        const int8x16_t v = vld1q_s8(reinterpret_cast<const std::int8_t*>(q + 16 * c));
        for (int i = 0; i < T; ++i) {
          const int8x16_t xv = repeat4(reinterpret_cast<const std::int8_t*>(xb[i] + at + 2) + 4 * c);
          s01[i] = vpadalq_s16(s01[i], vmull_s8(vget_low_s8(v), vget_low_s8(xv)));
          s23[i] = vpadalq_s16(s23[i], vmull_high_s8(v, xv));
        }
      }
    }
    const float32x4_t dw = fp16x4_to_fp32(chunk);
    for (int i = 0; i < T; ++i) {
      const int k = i * kGgmlPassBlocks + (b - b0);
      int32x4_t isum = rows_of(s01[i], s23[i]);
      if constexpr (kQ4) isum = vsubq_s32(isum, vdupq_n_s32(corr[k]));
      acc[i] = vaddq_f32(acc[i], vmulq_f32(vcvtq_f32_s32(isum), vmulq_n_f32(dw, dx[k])));
    }
  }
  for (int i = 0; i < T; ++i) vst1q_f32(o[i], acc[i]);
}

template <bool kQ4>
void matmul_ggml_rows(float* out, const unsigned char* w, const unsigned char* xb, int n, int full) {
  const int nb = n / 32;
  const std::size_t row_bytes = static_cast<std::size_t>(nb) * (kQ4 ? kQ4_0BlockBytes : kQ8_0BlockBytes);
  float dx[kGgmlPassBlocks];
  std::int32_t corr[kGgmlPassBlocks];
  for (int b0 = 0; full > 0 && b0 < nb; b0 += kGgmlPassBlocks) {
    const int b1 = nb - b0 < kGgmlPassBlocks ? nb : b0 + kGgmlPassBlocks;
    ggml_pass_terms<kQ4>(xb, b0, b1, dx, corr);
    for (int r = 0; r < full; r += kLanes) {
      float* o = out + r;
      ggml_quad<kQ4, 1>(&o, w + static_cast<std::size_t>(r) * row_bytes, &xb, b0, b1, dx, corr);
    }
  }
}

template <bool kQ4>
constexpr MatmulFn matmul_ggml = interleave4::matmul_interleaved4<kQ4, matmul_ggml_rows<kQ4>>;

template <bool kQ4>
void matmul_ggml_batch(float* out, std::size_t out_stride, const Matrix& w, const ActivationBatch& x, int rows) {
  if (w.interleave != kLanes) {
    matmul_batch_tiled(matmul_ggml<kQ4>, out, out_stride, w, x, rows);
    return;
  }
  const int full = rows / kLanes * kLanes, nb = w.cols / 32;
  const std::size_t row_bytes = static_cast<std::size_t>(nb) * (kQ4 ? kQ4_0BlockBytes : kQ8_0BlockBytes);
  const auto* wv = static_cast<const unsigned char*>(w.values);
  over_tiles_and_token_groups<kBatchTokens>(full, x.count, batch_tile_rows(w), [&](int r0, int r1, int t, int m) {
    const unsigned char* xb[kBatchTokens];
    for (int i = 0; i < m; ++i) xb[i] = static_cast<const unsigned char*>(x.at(t + i).values);
    float dx[kBatchTokens * kGgmlPassBlocks];
    std::int32_t corr[kBatchTokens * kGgmlPassBlocks];
    for (int b0 = 0; b0 < nb; b0 += kGgmlPassBlocks) {
      const int b1 = nb - b0 < kGgmlPassBlocks ? nb : b0 + kGgmlPassBlocks;
      for (int i = 0; i < m; ++i) ggml_pass_terms<kQ4>(xb[i], b0, b1, dx + i * kGgmlPassBlocks, corr + i * kGgmlPassBlocks);
      for (int r = r0; r < r1; r += kLanes) {
        float* o[kBatchTokens];
        for (int i = 0; i < m; ++i) o[i] = out + static_cast<std::size_t>(t + i) * out_stride + r;
        const unsigned char* base = wv + static_cast<std::size_t>(r) * row_bytes;
        if (m == kBatchTokens)
          ggml_quad<kQ4, kBatchTokens>(o, base, xb, b0, b1, dx, corr);
        else
          ggml_quad<kQ4, 1>(o, base, xb, b0, b1, dx, corr);
      }
    }
  });
  for (int t = 0; t < x.count; ++t)  // the row-major tail, as matmul_ggml computes it
    reference::matmul_ggml_tail<kQ4>(out + static_cast<std::size_t>(t) * out_stride, w, x.at(t), full, rows);
}

// IQ4_XS over the 4-row interleave (interleave4_ggml.h): per sub-block, each group of 4 rows x 4
// nibble bytes becomes grid values by one table lookup per nibble half (vqtbl1q_s8 of the
// 16-entry grid), widening multiplies against the activations repeated per lane (a grid value
// times an activation, and two of them, fit int16: 2 * 127 * 128 < 2^15) and pairwise widening
// adds, so lane k ends with row k's exact int32 sum. Each lane's 6-bit scale comes from shifts
// of its own scales_h and scales_l; then the reference's dl = d * (float)(ls - 32) and
// acc = acc + (float)isum * (dl * d_x), sub-blocks in order.
void matmul_iq4_xs_rows(float* out, const unsigned char* w, const unsigned char* xb, int n, int full) {
  constexpr int kSub = kIQ4_XSBlock / kIQ4_XSSubBlock;
  constexpr int kPass = kGgmlPassBlocks / kSub;  // super-blocks per pass: their sub-blocks' dx made once
  const int nb = n / kIQ4_XSBlock;
  const std::size_t row_bytes = static_cast<std::size_t>(nb) * kIQ4_XSBlockBytes;
  const int8x16_t grid = vld1q_s8(kIQ4NLValues);
  const uint8x16_t low4 = vdupq_n_u8(0x0F);
  float dx[kGgmlPassBlocks];
  for (int b0 = 0; full > 0 && b0 < nb; b0 += kPass) {
    const int b1 = nb - b0 < kPass ? nb : b0 + kPass;
    block_scales(xb, b0 * kSub, b1 * kSub, dx);  // the sub-blocks are Q8_0 blocks
    for (int r = 0; r < full; r += kLanes) {
      const unsigned char* base = w + static_cast<std::size_t>(r) * row_bytes;
      float32x4_t acc = b0 == 0 ? vdupq_n_f32(0.0f) : vld1q_f32(out + r);
      for (int b = b0; b < b1; ++b) {
        const unsigned char* chunk = base + static_cast<std::size_t>(b) * interleave4::kIQ4_XSChunk;
        const float32x4_t dv = fp16x4_to_fp32(chunk);
        // Byte loads (the chunk need not be aligned), then the 4 rows' scales_h and scales_l words.
        const uint32x4_t sh = vmovl_u16(vreinterpret_u16_u8(vld1_u8(chunk + interleave4::kIQ4_XSScalesH)));
        const uint32x4_t sl = vreinterpretq_u32_u8(vld1q_u8(chunk + interleave4::kIQ4_XSScalesL));
        for (int ib = 0; ib < kSub; ++ib) {
          const unsigned char* q = chunk + interleave4::kIQ4_XSNibbles + static_cast<std::size_t>(ib) * 16 * kLanes;
          const auto* xq = reinterpret_cast<const std::int8_t*>(
              xb + (static_cast<std::size_t>(b) * kSub + static_cast<std::size_t>(ib)) * kQ8_0BlockBytes + 2);
          int32x4_t s01 = vdupq_n_s32(0), s23 = vdupq_n_s32(0);
          for (int t = 0; t < 4; ++t) {
            const uint8x16_t v = vld1q_u8(q + 16 * t);
            const int8x16_t lo = vqtbl1q_s8(grid, vandq_u8(v, low4));
            const int8x16_t hi = vqtbl1q_s8(grid, vshrq_n_u8(v, 4));
            const int8x16_t xl = repeat4(xq + 4 * t), xh = repeat4(xq + 16 + 4 * t);
            s01 = vpadalq_s16(s01, vaddq_s16(vmull_s8(vget_low_s8(lo), vget_low_s8(xl)), vmull_s8(vget_low_s8(hi), vget_low_s8(xh))));
            s23 = vpadalq_s16(s23, vaddq_s16(vmull_high_s8(lo, xl), vmull_high_s8(hi, xh)));
          }
          const uint32x4_t ls = vorrq_u32(vandq_u32(vshlq_u32(sl, vdupq_n_s32(-4 * ib)), vdupq_n_u32(0x0F)),
                                          vshlq_n_u32(vandq_u32(vshlq_u32(sh, vdupq_n_s32(-2 * ib)), vdupq_n_u32(3)), 4));
          const float32x4_t dl = vmulq_f32(dv, vcvtq_f32_s32(vsubq_s32(vreinterpretq_s32_u32(ls), vdupq_n_s32(32))));
          const float32x4_t scale = vmulq_n_f32(dl, dx[(b - b0) * kSub + ib]);
          acc = vaddq_f32(acc, vmulq_f32(vcvtq_f32_s32(rows_of(s01, s23)), scale));
        }
      }
      vst1q_f32(out + r, acc);
    }
  }
}

}  // namespace

const Kernels& neon_kernels() {
  static const Kernels kNeon = [] {
    Kernels k = reference_kernels();
    k.name = "neon";
    k.matmul[type_index(TensorType::kF32)] = matmul_f32_entry<matmul_f32>;
    k.matmul[type_index(TensorType::kQ80)] = matmul_q80_entry<matmul_q80>;
    k.matmul_batch[type_index(TensorType::kQ80)] = matmul_q80_batch;
    k.interleave[type_index(TensorType::kF32)] = fixed_interleave<kLanes>;
    k.matmul[type_index(TensorType::kQ8_0)] = matmul_ggml<false>;
    k.matmul[type_index(TensorType::kQ4_0)] = matmul_ggml<true>;
    k.matmul_batch[type_index(TensorType::kQ8_0)] = matmul_ggml_batch<false>;
    k.matmul_batch[type_index(TensorType::kQ4_0)] = matmul_ggml_batch<true>;
    k.interleave[type_index(TensorType::kQ8_0)] = fixed_interleave<kLanes>;
    k.interleave[type_index(TensorType::kQ4_0)] = fixed_interleave<kLanes>;
    k.matmul[type_index(TensorType::kIQ4_XS)] = interleave4::matmul_iq4_xs_interleaved4<matmul_iq4_xs_rows>;
    k.interleave[type_index(TensorType::kIQ4_XS)] = fixed_interleave<kLanes>;
    return k;
  }();
  return kNeon;
}

}  // namespace pocketlm
