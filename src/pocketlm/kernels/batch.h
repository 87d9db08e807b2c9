// Batched matmuls for prefill: one pass over a weight matrix serves a block of prompt tokens.
// Every (token, row) dot product is computed by the backend's own single-token kernel code
// (or a batched slot with the same per-row order), so a batched pass gives the bits of one
// token at a time; only how often the weight bytes travel from memory changes.
#pragma once

#include <cstddef>

#include "pocketlm/kernels/kernels.h"

namespace pocketlm {

// Rows per tile of the generic batched matmul: whole multiples of 32 (so every backend's row
// blocks stay whole, as for the worker split in model/blocks.cpp) holding about this many
// bytes of weights, which stay in the L1/L2 cache while every token of the block reads them.
inline constexpr std::size_t kBatchTileBytes = 16 * 1024;

// out[t * out_stride + r] = W[r, :] · x_t (t < x.count, r < rows) with `kernels`' batched slot
// for w.type, or, without one, kernels.matmul over tiles of rows with the tokens inside each
// tile. Bit-identical to calling kernels.matmul once per token. `rows` <= w.rows; w as for
// MatmulFn (its first row starts an interleaved block).
void matmul_batch(const Kernels& kernels, float* out, std::size_t out_stride, const Matrix& w,
                  const ActivationBatch& x, int rows);

// The generic path: `f` over tiles of batch_tile_rows(w) rows, every token inside each tile.
// For a backend's batched slot to fall back on for layouts it does not handle.
void matmul_batch_tiled(MatmulFn f, float* out, std::size_t out_stride, const Matrix& w, const ActivationBatch& x,
                        int rows);

// Rows per tile matmul_batch's generic path uses for `w` (a multiple of 32, at least 32).
int batch_tile_rows(const Matrix& w);

// The loop of a backend's batched slot: f(r0, r1, t, m) for the rows [0, full) in tiles [r0, r1)
// of tile_rows (a tile's weights stay in cache while every token passes over them) and, in each
// tile, tokens t..t+m-1 with m = kGroup (the last count % kGroup one at a time, m = 1).
template <int kGroup, class F>
void over_tiles_and_token_groups(int full, int count, int tile_rows, F&& f) {
  for (int r0 = 0; r0 < full; r0 += tile_rows) {
    const int r1 = full - r0 < tile_rows ? full : r0 + tile_rows;
    for (int t = 0; t < count;) {
      const int m = count - t >= kGroup ? kGroup : 1;
      f(r0, r1, t, m);
      t += m;
    }
  }
}

}  // namespace pocketlm
