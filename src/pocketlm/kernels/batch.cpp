#include "pocketlm/kernels/batch.h"

namespace pocketlm {

namespace {

constexpr int kTileAlign = 32;

}  // namespace

int batch_tile_rows(const Matrix& w) {
  const std::size_t cols = static_cast<std::size_t>(w.cols);
  const std::size_t row_bytes = row_value_bytes(w.type, cols, w.group) + row_scale_bytes(w.type, cols, w.group);
  const std::size_t fit = row_bytes ? kBatchTileBytes / row_bytes : 0;
  const int rows = static_cast<int>(fit / kTileAlign * kTileAlign);
  return rows < kTileAlign ? kTileAlign : rows;
}

void matmul_batch(const Kernels& kernels, float* out, std::size_t out_stride, const Matrix& w,
                  const ActivationBatch& x, int rows) {
  const int type = type_index(w.type);
  if (kernels.matmul_batch[type]) {
    kernels.matmul_batch[type](out, out_stride, w, x, rows);
    return;
  }
  matmul_batch_tiled(kernels.matmul[type], out, out_stride, w, x, rows);
}

void matmul_batch_tiled(MatmulFn f, float* out, std::size_t out_stride, const Matrix& w, const ActivationBatch& x,
                        int rows) {
  // Tile by tile, every token: the tile is read from memory for the first token and from the
  // cache for the others. A tile starts on a multiple of 32 rows, so the kernel computes each
  // row with the same code as over the whole matrix.
  const int tile = batch_tile_rows(w);
  for (int r0 = 0; r0 < rows; r0 += tile) {
    const Matrix view = rows_from(w, r0);
    const int n = rows - r0 < tile ? rows - r0 : tile;
    for (int t = 0; t < x.count; ++t) f(out + static_cast<std::size_t>(t) * out_stride + r0, view, x.at(t), n);
  }
}

}  // namespace pocketlm
