// The Q4_0 and Q8_0 matmul over the 4-row interleave (quant/block_interleave.h: per block of 32
// columns, the 4 rows' fp16 scales, then groups of 4 rows x 4 bytes), shared by the backends that
// read that layout (tiled4, cortex_m4, neon).
// - matmul_interleaved4<kQ4, Rows>: the table's matmul; Rows does the whole interleaved blocks of
//   rows, the row-major tail (rows % 4) goes to the reference loops.
// - matmul_rows4<kQ4, Sums>: a Rows for scalar backends: per 4 rows and block, Sums gives the 4
//   exact int32 sums of the stored bytes (Q4_0: the nibbles 0..15) with the block's activations;
//   then each row does the reference's acc = acc + (float)(isum - 8 * sum(x) for Q4_0) * (d_w *
//   d_x), blocks in order. The integer sums are exact in any order, so any Sums is exact.
// - matmul_iq4_xs_rows4<SubSums>: the same for IQ4_XS (interleaved with head2 = 2: per
//   super-block the 4 rows' d, scales_h, scales_l, then 32 groups of 4 rows x 4 nibble bytes);
//   SubSums gives the 4 exact int32 sums of one sub-block's grid values with its activations,
//   then each row does the reference's dl = d * (float)(ls - 32) and acc = acc + (float)isum *
//   (dl * d_x), sub-blocks in order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "pocketlm/kernels/kernels.h"
#include "pocketlm/kernels/reference.h"
#include "pocketlm/quant/fp16.h"
#include "pocketlm/quant/iq4_xs.h"
#include "pocketlm/quant/q4_0.h"
#include "pocketlm/quant/q8_0.h"

namespace pocketlm::interleave4 {

inline constexpr int kLanes = 4;

// Rows [0, full) of the interleaved blocks: out, the weights, the Q8_0 activation blocks, cols, full.
using RowsFn = void (*)(float* out, const unsigned char* w, const unsigned char* xb, int n, int full);
// isum[k] += the sum over the block of row k's stored values x the activations (q: the block's
// bytes after the 4 scales, xq: the activation block's 32 int8 values).
using SumsFn = void (*)(std::int32_t* isum, const unsigned char* q, const std::int8_t* xq);

inline std::int32_t block_sum(const std::int8_t* xq) {
  std::int32_t s = 0;
  for (int i = 0; i < 32; ++i) s += xq[i];
  return s;
}

template <bool kQ4, SumsFn Sums>
void matmul_rows4(float* out, const unsigned char* w, const unsigned char* xb, int n, int full) {
  constexpr std::size_t kBs = kQ4 ? kQ4_0BlockBytes : kQ8_0BlockBytes;
  const int nb = n / 32;
  const std::size_t row_bytes = static_cast<std::size_t>(nb) * kBs;
  for (int r = 0; r < full; r += kLanes) {
    const unsigned char* base = w + static_cast<std::size_t>(r) * row_bytes;
    float acc[kLanes] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (int b = 0; b < nb; ++b) {
      const unsigned char* chunk = base + static_cast<std::size_t>(b) * kLanes * kBs;
      const unsigned char* xblk = xb + static_cast<std::size_t>(b) * kQ8_0BlockBytes;
      const auto* xq = reinterpret_cast<const std::int8_t*>(xblk + 2);
      std::int32_t isum[kLanes] = {0, 0, 0, 0};
      Sums(isum, chunk + 2 * kLanes, xq);
      const std::int32_t correction = kQ4 ? 8 * block_sum(xq) : 0;
      const float dx = fp16_to_fp32(load_fp16(xblk));
      for (int k = 0; k < kLanes; ++k)
        acc[k] = acc[k] + static_cast<float>(isum[k] - correction) * (fp16_to_fp32(load_fp16(chunk + 2 * k)) * dx);
    }
    for (int k = 0; k < kLanes; ++k) out[r + k] = acc[k];
  }
}

// The activation terms of Q4_0 blocks [b0, b0 + bn), for backends that make them once per matmul
// (a pass of blocks) instead of once per 4 rows: each block's 8 * sum(x) (the nibbles' offset of
// 8, the same for every row) and its scale, and prep(b, xq) readies block b0 + b's 32 values for
// the backend's sums. Each row then does the reference's
//   acc = acc + (float)(isum - correction[b]) * (d_w * dx[b])
// with isum the exact int32 sum of its stored nibbles (0..15) and the activations.
template <class Prep>
inline void q4_0_pass_terms(const unsigned char* xb, int b0, int bn, std::int32_t* correction, float* dx, Prep&& prep) {
  for (int b = 0; b < bn; ++b) {
    const unsigned char* xblk = xb + static_cast<std::size_t>(b0 + b) * kQ8_0BlockBytes;
    const auto* xq = reinterpret_cast<const std::int8_t*>(xblk + 2);
    correction[b] = 8 * block_sum(xq);
    dx[b] = fp16_to_fp32(load_fp16(xblk));
    prep(b, xq);
  }
}

template <bool kQ4, RowsFn Rows>
void matmul_interleaved4(float* out, const Matrix& w, const Activation& x, int rows) {
  const int full = w.interleave == kLanes ? rows / kLanes * kLanes : 0;
  Rows(out, static_cast<const unsigned char*>(w.values), static_cast<const unsigned char*>(x.values), w.cols, full);
  reference::matmul_ggml_tail<kQ4>(out, w, x, full, rows);
}

// ---- IQ4_XS ----

// Bytes of one super-block of 4 interleaved rows, and where its fields start.
inline constexpr std::size_t kIQ4_XSChunk = kLanes * kIQ4_XSBlockBytes;
inline constexpr std::size_t kIQ4_XSScalesH = 2 * kLanes, kIQ4_XSScalesL = 4 * kLanes, kIQ4_XSNibbles = 8 * kLanes;

// isum[k] += sub-block's sum for row k (q: its 4 groups of 4 rows x 4 nibble bytes, 64 bytes;
// xq: the activation block's 32 int8 values).
using SubSumsFn = void (*)(std::int32_t* isum, const unsigned char* q, const std::int8_t* xq);

// Row k's 8 header bytes (d, scales_h, scales_l) of an interleaved super-block, in the plain
// block's order, so that iq4_xs_scale reads them.
inline void iq4_xs_head(unsigned char* head, const unsigned char* chunk, int k) {
  std::memcpy(head, chunk + 2 * k, 2);
  std::memcpy(head + 2, chunk + kIQ4_XSScalesH + 2 * k, 2);
  std::memcpy(head + 4, chunk + kIQ4_XSScalesL + 4 * k, 4);
}

template <SubSumsFn SubSums>
void matmul_iq4_xs_rows4(float* out, const unsigned char* w, const unsigned char* xb, int n, int full) {
  constexpr int kSub = kIQ4_XSBlock / kIQ4_XSSubBlock;
  const int nb = n / kIQ4_XSBlock;
  const std::size_t row_bytes = static_cast<std::size_t>(nb) * kIQ4_XSBlockBytes;
  for (int r = 0; r < full; r += kLanes) {
    const unsigned char* base = w + static_cast<std::size_t>(r) * row_bytes;
    float acc[kLanes] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (int b = 0; b < nb; ++b) {
      const unsigned char* chunk = base + static_cast<std::size_t>(b) * kIQ4_XSChunk;
      unsigned char head[kLanes][kIQ4_XSScaleBytes];
      float d[kLanes];
      for (int k = 0; k < kLanes; ++k) {
        iq4_xs_head(head[k], chunk, k);
        d[k] = fp16_to_fp32(load_fp16(head[k]));
      }
      for (int ib = 0; ib < kSub; ++ib) {
        const unsigned char* xblk = xb + (static_cast<std::size_t>(b) * kSub + static_cast<std::size_t>(ib)) * kQ8_0BlockBytes;
        std::int32_t isum[kLanes] = {0, 0, 0, 0};
        SubSums(isum, chunk + kIQ4_XSNibbles + static_cast<std::size_t>(ib) * 16 * kLanes,
                reinterpret_cast<const std::int8_t*>(xblk + 2));
        const float dx = fp16_to_fp32(load_fp16(xblk));
        for (int k = 0; k < kLanes; ++k) {
          const float dl = d[k] * static_cast<float>(iq4_xs_scale(head[k], ib) - 32);
          acc[k] = acc[k] + static_cast<float>(isum[k]) * (dl * dx);
        }
      }
    }
    for (int k = 0; k < kLanes; ++k) out[r + k] = acc[k];
  }
}

// The table's IQ4_XS matmul: Rows over the interleaved blocks, the row-major tail (rows % 4) as
// the reference computes it.
template <RowsFn Rows>
void matmul_iq4_xs_interleaved4(float* out, const Matrix& w, const Activation& x, int rows) {
  const int full = w.interleave == kLanes ? rows / kLanes * kLanes : 0;
  Rows(out, static_cast<const unsigned char*>(w.values), static_cast<const unsigned char*>(x.values), w.cols, full);
  if (full < rows) reference::matmul_iq4_xs(out + full, rows_from(w, full), x, rows - full);
}

}  // namespace pocketlm::interleave4
