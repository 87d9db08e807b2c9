// The Q8_0 and Q4_0 matmuls of the x86 backends (ggml blocks of 32 weights with an fp16 scale,
// Q8_0 activations), single token and batched for prefill, and IQ4_XS's, written once over a
// vector width `V` (Vec256: 8 lanes, avx2 and avxvnni; Vec512: 16 lanes, avx512) and a `Dot`
// policy of that width, like kernels/x86_q80.h.
// The rows are interleaved by V::kLanes with 4 bytes of a row per 32-bit lane
// (quant/block_interleave.h): per block, the V::kLanes fp16 scales side by side, then chunks of
// 4 * V::kLanes bytes, chunk t holding bytes 4t..4t+3 of each row. A multiply-add against 4
// activation bytes broadcast leaves each row's int32 block sum in its own lane: exact in any
// order. Each lane then does the reference's acc = acc + (float)isum * (d_w * d_x), blocks in
// order, so the results are the bits of reference::matmul_q8_0 / matmul_q4_0. Q4_0 multiplies
// the unsigned nibbles (q + 8) and subtracts 8 * (the activation block's sum) in integers; a
// biased Dot's Q8_0 adds (w + 128) * x and subtracts 128 * that sum.
// Included by backend files only: internal linkage, one copy per including file.
#pragma once

#include <cstddef>
#include <cstdint>

#include "pocketlm/kernels/batch.h"
#include "pocketlm/kernels/kernels.h"
#include "pocketlm/kernels/reference.h"
#include "pocketlm/quant/fp16.h"
#include "pocketlm/quant/iq4_xs.h"
#include "pocketlm/quant/q4_0.h"
#include "pocketlm/quant/q8_0.h"

namespace pocketlm {
namespace {  // NOLINT(google-build-namespaces): one copy per backend file

// Blocks handled per pass over the rows: their activation scales and sums are computed once.
constexpr int kGgmlBlockChunk = 64;

// The exact int32 block sums of N row groups (lane k = row k of each), from their interleaved
// block chunks' values q[j] and the activation block's int8 values xq: the activation bytes
// are broadcast once for all groups.
template <class V, class Dot, bool kQ4, int N>
inline void block_sums(const unsigned char* const* q, const std::int8_t* xq, typename V::I* s) {
  constexpr int kChunk = 4 * V::kLanes;
  typename V::I a[N];
  for (int j = 0; j < N; ++j) a[j] = V::splat(0);
  if constexpr (kQ4) {
    // 4 chunks: lane k = 4 bytes of row k = weights 4t..4t+3 (low nibbles) and 16+4t..16+4t+3
    // (high nibbles). Each lane's pair sums stay small: at most 8 products of a nibble (<= 15)
    // and an activation (|x| <= 127), |sum| <= 30480 (Dot::add_small).
    const typename V::I low4 = V::splat(0x0F0F0F0F);
    for (int t = 0; t < 4; ++t) {
      const typename V::I xl = V::splat4(xq + 4 * t);
      const typename V::I xh = V::splat4(xq + 16 + 4 * t);
      for (int j = 0; j < N; ++j) {
        const typename V::I v = V::load(q[j] + kChunk * t);
        a[j] = Dot::add_small(a[j], V::and_i(v, low4), xl);
        a[j] = Dot::add_small(a[j], V::and_i(V::shift_right4(v), low4), xh);
      }
    }
    for (int j = 0; j < N; ++j) s[j] = Dot::widen_small(a[j]);
  } else {
    // 8 chunks: lane k = 4 signed bytes of row k (Dot::int8_add: exact for every int8 w).
    for (int t = 0; t < 8; ++t) {
      const typename V::I xv = V::splat4(xq + 4 * t);
      for (int j = 0; j < N; ++j) a[j] = Dot::int8_add(a[j], V::load(q[j] + kChunk * t), xv);
    }
    for (int j = 0; j < N; ++j) s[j] = a[j];
  }
}

// Activation blocks [b0, b1) of the Q8_0 blocks at xb: dx[b - b0] their scales, corr[b - b0]
// the correction their int32 sums need (8 * the block's sum for Q4_0's unsigned nibbles, 128 *
// it for a biased Dot's Q8_0, else 0).
template <class Dot, bool kQ4>
inline void ggml_activation_blocks(const unsigned char* xb, int b0, int b1, float* dx, std::int32_t* corr) {
  for (int b = b0; b < b1; ++b) {
    const unsigned char* xblk = xb + static_cast<std::size_t>(b) * kQ8_0BlockBytes;
    dx[b - b0] = fp16_to_fp32(load_fp16(xblk));
    std::int32_t s = 0;
    if constexpr (kQ4 || Dot::kBiased)
      for (int i = 0; i < 32; ++i) s += static_cast<std::int8_t>(xblk[2 + i]);
    corr[b - b0] = (kQ4 ? 8 : 128) * s;
  }
}

// One pass of blocks [b0, b1) over the N row groups group[0..N) of an interleaved Q4_0 or Q8_0
// matrix (rows of row_bytes): each lane's accumulator starts at 0 (b0 = 0) or from out[] (a float
// round trip, exact), then adds (float)(isum - correction) * (d_w * d_x) block by block.
template <class V, class Dot, bool kQ4, int N>
inline void ggml_pass(float* out, const unsigned char* w, const unsigned char* xb, std::size_t row_bytes, int b0,
                      int b1, const float* dx, const std::int32_t* corr, const int* group) {
  constexpr std::size_t kL = V::kLanes;
  constexpr std::size_t kBs = kQ4 ? kQ4_0BlockBytes : kQ8_0BlockBytes;
  const unsigned char* base[N];
  typename V::F acc[N];
  for (int j = 0; j < N; ++j) {
    base[j] = w + static_cast<std::size_t>(group[j]) * kL * row_bytes;
    acc[j] = b0 == 0 ? V::zero_f() : V::loadf(out + group[j] * kL);
  }
  for (int b = b0; b < b1; ++b) {
    const std::size_t at = static_cast<std::size_t>(b) * kL * kBs;
    const unsigned char* q[N];
    for (int j = 0; j < N; ++j) q[j] = base[j] + at + 2 * kL;
    const auto* xq = reinterpret_cast<const std::int8_t*>(xb + static_cast<std::size_t>(b) * kQ8_0BlockBytes + 2);
    typename V::I sums[N];
    block_sums<V, Dot, kQ4, N>(q, xq, sums);
    const typename V::I c = V::splat(corr[b - b0]);
    const typename V::F dxv = V::splat_f(dx[b - b0]);
    for (int j = 0; j < N; ++j) {
      const typename V::F d = V::mul(V::load_fp16(base[j] + at), dxv);
      acc[j] = V::add(acc[j], V::mul(V::to_float(V::sub_i(sums[j], c)), d));
    }
  }
  for (int j = 0; j < N; ++j) V::storef(out + group[j] * kL, acc[j]);
}

// Rows [0, full) of an interleaved Q4_0 or Q8_0 matrix: the row groups cut into
// V::kGgmlStreams runs of equal length far apart, one group of each run per pass (several weight
// streams far apart keep more of the memory system busy than one: +7 % decode on synth15M Q4_0
// for two on avx2), then the few groups left over one at a time; blocks in chunks of
// kGgmlBlockChunk, a later chunk continuing each row's accumulator from out[].
template <class V, class Dot, bool kQ4>
void matmul_ggml_rows(float* out, const unsigned char* w, const unsigned char* xb, int n, int full) {
  constexpr int kS = V::kGgmlStreams;
  constexpr std::size_t kBs = kQ4 ? kQ4_0BlockBytes : kQ8_0BlockBytes;
  const int nb = n / 32;
  const std::size_t row_bytes = static_cast<std::size_t>(nb) * kBs;
  float dx[kGgmlBlockChunk];
  std::int32_t corr[kGgmlBlockChunk];
  const int groups = full / V::kLanes, run = groups / kS;
  for (int b0 = 0; b0 < nb; b0 += kGgmlBlockChunk) {
    const int b1 = nb - b0 < kGgmlBlockChunk ? nb : b0 + kGgmlBlockChunk;
    ggml_activation_blocks<Dot, kQ4>(xb, b0, b1, dx, corr);
    for (int g = 0; g < run; ++g) {
      int group[kS];
      for (int j = 0; j < kS; ++j) group[j] = g + j * run;
      ggml_pass<V, Dot, kQ4, kS>(out, w, xb, row_bytes, b0, b1, dx, corr, group);
    }
    for (int g = kS * run; g < groups; ++g) ggml_pass<V, Dot, kQ4, 1>(out, w, xb, row_bytes, b0, b1, dx, corr, &g);
  }
}

// The Matrix entry: interleaved rows here, the row-major tail (or a layout of another width)
// as the reference computes it.
template <class V, class Dot, bool kQ4>
void matmul_ggml(float* out, const Matrix& w, const Activation& x, int rows) {
  const int full = w.interleave == V::kLanes ? rows / V::kLanes * V::kLanes : 0;
  const auto* xb = static_cast<const unsigned char*>(x.values);
  if (full > 0) matmul_ggml_rows<V, Dot, kQ4>(out, static_cast<const unsigned char*>(w.values), xb, w.cols, full);
  reference::matmul_ggml_tail<kQ4>(out, w, x, full, rows);
}

// ---- Batched (prefill): Q8_0 and Q4_0 on the same interleaved rows ----

// Tokens and blocks per chunk of the batched matmul: their activation scales and corrections
// wait on the stack (2 x 64 x 32 x 4 bytes: 16 KiB).
constexpr int kGgmlBatchTokens = 64;
constexpr int kGgmlBatchBlocks = 32;

// T tokens' blocks [b0, b1) of one row group (its interleaved bytes from g): each weight chunk
// is loaded, and a Q4_0 chunk's nibbles split, once for all T tokens; per token and lane the
// arithmetic of ggml_pass, blocks in order. xq[i]: token i's Q8_0 blocks; dx and corr: token
// i's block b at [i * kGgmlBatchBlocks + b - b0]; o[i]: token i's kLanes outputs.
template <class V, class Dot, bool kQ4, int T>
inline void ggml_batch_group(float* const* o, const unsigned char* g, const unsigned char* const* xq, const float* dx,
                             const std::int32_t* corr, int b0, int b1) {
  using I = typename V::I;
  constexpr std::size_t kL = V::kLanes;
  constexpr std::size_t kBs = kQ4 ? kQ4_0BlockBytes : kQ8_0BlockBytes;
  constexpr int kChunk = 4 * V::kLanes;
  typename V::F acc[T];
  for (int i = 0; i < T; ++i) acc[i] = b0 == 0 ? V::zero_f() : V::loadf(o[i]);
  for (int b = b0; b < b1; ++b) {
    const unsigned char* blk = g + static_cast<std::size_t>(b) * kL * kBs;
    const unsigned char* q = blk + 2 * kL;
    const std::size_t at = static_cast<std::size_t>(b) * kQ8_0BlockBytes + 2;
    I a[T];
    for (int i = 0; i < T; ++i) a[i] = V::splat(0);
    if constexpr (kQ4) {  // as block_sums: int16 pair sums, widened once
      const I low4 = V::splat(0x0F0F0F0F);
      for (int c = 0; c < 4; ++c) {
        const I v = V::load(q + kChunk * c);
        const I lo = V::and_i(v, low4), hi = V::and_i(V::shift_right4(v), low4);
        for (int i = 0; i < T; ++i) {
          const auto* x = reinterpret_cast<const std::int8_t*>(xq[i] + at);
          a[i] = Dot::add_small(Dot::add_small(a[i], lo, V::splat4(x + 4 * c)), hi, V::splat4(x + 16 + 4 * c));
        }
      }
      for (int i = 0; i < T; ++i) a[i] = Dot::widen_small(a[i]);
    } else {
      for (int c = 0; c < 8; ++c) {
        const I v = V::load(q + kChunk * c);
        for (int i = 0; i < T; ++i)
          a[i] = Dot::int8_add(a[i], v, V::splat4(reinterpret_cast<const std::int8_t*>(xq[i] + at) + 4 * c));
      }
    }
    const typename V::F dw = V::load_fp16(blk);
    for (int i = 0; i < T; ++i) {
      const int k = i * kGgmlBatchBlocks + b - b0;
      const typename V::F d = V::mul(dw, V::splat_f(dx[k]));
      acc[i] = V::add(acc[i], V::mul(V::to_float(V::sub_i(a[i], V::splat(corr[k]))), d));
    }
  }
  for (int i = 0; i < T; ++i) V::storef(o[i], acc[i]);
}

// The batched Q8_0/Q4_0 matmul (kernels/batch.h): per row group, the tokens four at a time share
// each weight chunk (read from memory for the first four, from L1 for the rest). Other layouts
// take the generic path.
template <class V, class Dot, bool kQ4>
void matmul_ggml_batch(float* out, std::size_t out_stride, const Matrix& w, const ActivationBatch& x, int rows) {
  constexpr int kT = 4;
  constexpr std::size_t kBs = kQ4 ? kQ4_0BlockBytes : kQ8_0BlockBytes;
  if (w.interleave != V::kLanes) {
    matmul_batch_tiled(matmul_ggml<V, Dot, kQ4>, out, out_stride, w, x, rows);
    return;
  }
  const int full = rows / V::kLanes * V::kLanes, nb = w.cols / 32;
  const std::size_t row_bytes = static_cast<std::size_t>(nb) * kBs;
  const auto* wv = static_cast<const unsigned char*>(w.values);
  auto xq = [&](int t) { return static_cast<const unsigned char*>(x.at(t).values); };
  float dx[kGgmlBatchTokens * kGgmlBatchBlocks];
  std::int32_t corr[kGgmlBatchTokens * kGgmlBatchBlocks];
  for (int t0 = 0; t0 < x.count; t0 += kGgmlBatchTokens) {
    const int count = x.count - t0 < kGgmlBatchTokens ? x.count - t0 : kGgmlBatchTokens;
    for (int b0 = 0; b0 < nb; b0 += kGgmlBatchBlocks) {
      const int b1 = nb - b0 < kGgmlBatchBlocks ? nb : b0 + kGgmlBatchBlocks;
      for (int t = 0; t < count; ++t)
        ggml_activation_blocks<Dot, kQ4>(xq(t0 + t), b0, b1, dx + t * kGgmlBatchBlocks, corr + t * kGgmlBatchBlocks);
      for (int r = 0; r < full; r += V::kLanes) {
        const unsigned char* g = wv + static_cast<std::size_t>(r) * row_bytes;
        for (int t = 0; t < count;) {
          const int m = count - t >= kT ? kT : 1;  // the last count % 4 tokens one at a time
          float* o[kT];
          const unsigned char* xt[kT];
          for (int i = 0; i < m; ++i) {
            o[i] = out + static_cast<std::size_t>(t0 + t + i) * out_stride + r;
            xt[i] = xq(t0 + t + i);
          }
          const std::size_t k = static_cast<std::size_t>(t) * kGgmlBatchBlocks;
          if (m == kT)
            ggml_batch_group<V, Dot, kQ4, kT>(o, g, xt, dx + k, corr + k, b0, b1);
          else
            ggml_batch_group<V, Dot, kQ4, 1>(o, g, xt, dx + k, corr + k, b0, b1);
          t += m;
        }
      }
    }
  }
  for (int t = 0; t < x.count; ++t)  // the row-major tail, as matmul_ggml computes it
    reference::matmul_ggml_tail<kQ4>(out + static_cast<std::size_t>(t) * out_stride, w, x.at(t), full, rows);
}

// ---- IQ4_XS (quant/iq4_xs.h), interleaved by V::kLanes rows (quant/block_interleave.h, head2
// = 2): per super-block, the kLanes rows' d, then their scales_h, scales_l, then 32 chunks of 4
// nibble bytes per row. Each lane is one row: its 6-bit sub-block scales come from shifts of
// its own scales_h and scales_l, its 32 grid values per sub-block from a byte lookup of the
// nibbles in the 16-entry grid, their int8 dot with the activation block through
// Dot::grid_add, then the reference's acc = acc + (float)isum * (dl * d_x) with
// dl = d * (float)(ls - 32), sub-blocks in order.
// Dot::grid_add(acc, g, x, ax) adds the int32 sums of 4 products g[i] * x[i]: a maddubs Dot as
// |x| * (g with x's sign), |x| made once per activation block for every row (ax), so that a
// weight vector costs one sign instruction instead of vpabsb and vpsignb; a biased Dot (VNNI)
// as (g + 128) * x straight from a grid of g + 128, the caller removing 128 * sum(x).

// Super-blocks handled per pass over the rows: their activation scales and sums computed once.
constexpr int kIQ4_XSChunk = 8;

// ggml's grid + 128, as unsigned bytes: the table a biased Dot looks the nibbles up in.
constexpr auto kIQ4NLBiased = [] {
  struct {
    unsigned char v[16];
  } t{};
  for (int i = 0; i < 16; ++i) t.v[i] = static_cast<unsigned char>(kIQ4NLValues[i] + 128);
  return t;
}();

// One pass of super-blocks [b0, b1) over the N row groups group[0..N) (as ggml_pass): dx, corr
// and (a maddubs Dot's) xabs per activation sub-block of the chunk, xabs 32 bytes each.
template <class V, class Dot, int N>
inline void iq4_xs_pass(float* out, const unsigned char* w, std::size_t row_bytes, int b0, int b1, const float* dx,
                        const std::int32_t* corr, const unsigned char* xb, const unsigned char* xabs,
                        const int* group) {
  constexpr std::size_t kL = V::kLanes;
  constexpr int kSub = kIQ4_XSBlock / kIQ4_XSSubBlock;
  using I = typename V::I;
  using F = typename V::F;
  const I grid = Dot::kBiased ? V::table16(kIQ4NLBiased.v) : V::table16(kIQ4NLValues);
  const I low4 = V::splat(0x0F0F0F0F);
  const unsigned char* base[N];
  F acc[N];
  for (int j = 0; j < N; ++j) {
    base[j] = w + static_cast<std::size_t>(group[j]) * kL * row_bytes;
    acc[j] = b0 == 0 ? V::zero_f() : V::loadf(out + group[j] * kL);
  }
  for (int b = b0; b < b1; ++b) {
    const std::size_t at = static_cast<std::size_t>(b) * kL * kIQ4_XSBlockBytes;
    // Each row's dl * d_x per sub-block, made before the dots so that they keep the registers.
    // The scale bits move to the bottom of sh and sl by fixed shifts (a shift by a count in a
    // register measured 5 % slower on avx2).
    alignas(64) float scale[N][kSub][kL];
    for (int j = 0; j < N; ++j) {
      const unsigned char* chunk = base[j] + at;
      const F d = V::load_fp16(chunk);
      I sh = V::load_u16(chunk + 2 * kL), sl = V::load(chunk + 4 * kL);
      for (int ib = 0; ib < kSub; ++ib, sh = V::shift_right2_32(sh), sl = V::shift_right4_32(sl)) {
        const I ls = V::or_i(V::and_i(sl, V::splat(0x0F)), V::shift_left4_32(V::and_i(sh, V::splat(3))));
        const F dl = V::mul(d, V::to_float(V::sub_i(ls, V::splat(32))));
        V::storef(scale[j][ib], V::mul(dl, V::splat_f(dx[(b - b0) * kSub + ib])));
      }
    }
    for (int ib = 0; ib < kSub; ++ib) {
      const int sub = (b - b0) * kSub + ib;
      const auto* xq = reinterpret_cast<const std::int8_t*>(xb + static_cast<std::size_t>(b * kSub + ib) * kQ8_0BlockBytes + 2);
      const auto* xa = reinterpret_cast<const std::int8_t*>(xabs + static_cast<std::size_t>(sub) * 32);
      I s[N];
      for (int j = 0; j < N; ++j) s[j] = V::splat(0);
      for (int t = 0; t < 4; ++t) {
        const I xl = V::splat4(xq + 4 * t), xh = V::splat4(xq + 16 + 4 * t);
        const I al = Dot::kBiased ? xl : V::splat4(xa + 4 * t), ah = Dot::kBiased ? xh : V::splat4(xa + 16 + 4 * t);
        const std::size_t q = 8 * kL + (static_cast<std::size_t>(ib) * 4 + static_cast<std::size_t>(t)) * 4 * kL;
        for (int j = 0; j < N; ++j) {
          const I v = V::load(base[j] + at + q);
          s[j] = Dot::grid_add(s[j], V::lookup16(grid, V::and_i(v, low4)), xl, al);
          s[j] = Dot::grid_add(s[j], V::lookup16(grid, V::and_i(V::shift_right4(v), low4)), xh, ah);
        }
      }
      for (int j = 0; j < N; ++j) {
        if constexpr (Dot::kBiased) s[j] = V::sub_i(s[j], V::splat(corr[sub]));
        acc[j] = V::add(acc[j], V::mul(V::to_float(s[j]), V::loadf(scale[j][ib])));
      }
    }
  }
  for (int j = 0; j < N; ++j) V::storef(out + group[j] * kL, acc[j]);
}

// Rows [0, full) in V::kGgmlStreams runs far apart, one group of each per pass (as
// matmul_ggml_rows), the groups left over one at a time; super-blocks in chunks of kIQ4_XSChunk.
template <class V, class Dot>
void matmul_iq4_xs_lanes(float* out, const Matrix& w, const Activation& x, int rows) {
  constexpr int kSub = kIQ4_XSBlock / kIQ4_XSSubBlock;
  constexpr int kS = V::kGgmlStreams;
  const int full = w.interleave == V::kLanes ? rows / V::kLanes * V::kLanes : 0;
  const int nb = w.cols / kIQ4_XSBlock;
  const std::size_t row_bytes = static_cast<std::size_t>(nb) * kIQ4_XSBlockBytes;
  const auto* wv = static_cast<const unsigned char*>(w.values);
  const auto* xb = static_cast<const unsigned char*>(x.values);
  float dx[kIQ4_XSChunk * kSub];
  std::int32_t corr[kIQ4_XSChunk * kSub];
  alignas(64) unsigned char xabs[kIQ4_XSChunk * kSub * 32];
  const int groups = full / V::kLanes, run = groups / kS;
  for (int b0 = 0; full > 0 && b0 < nb; b0 += kIQ4_XSChunk) {
    const int b1 = nb - b0 < kIQ4_XSChunk ? nb : b0 + kIQ4_XSChunk;
    ggml_activation_blocks<Dot, false>(xb, b0 * kSub, b1 * kSub, dx, corr);  // its sub-blocks are Q8_0 blocks
    if constexpr (!Dot::kBiased)
      for (int i = 0; i < (b1 - b0) * kSub; ++i) {
        const auto* xq = reinterpret_cast<const std::int8_t*>(xb + static_cast<std::size_t>(b0 * kSub + i) * kQ8_0BlockBytes + 2);
        for (int k = 0; k < 32; ++k) xabs[i * 32 + k] = static_cast<unsigned char>(xq[k] < 0 ? -xq[k] : xq[k]);
      }
    for (int g = 0; g < run; ++g) {
      int group[kS];
      for (int j = 0; j < kS; ++j) group[j] = g + j * run;
      iq4_xs_pass<V, Dot, kS>(out, wv, row_bytes, b0, b1, dx, corr, xb, xabs, group);
    }
    for (int g = kS * run; g < groups; ++g) iq4_xs_pass<V, Dot, 1>(out, wv, row_bytes, b0, b1, dx, corr, xb, xabs, &g);
  }
  if (full < rows) reference::matmul_iq4_xs(out + full, rows_from(w, full), x, rows - full);
}

}  // namespace
}  // namespace pocketlm
