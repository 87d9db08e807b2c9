// Matrix: a weight matrix [rows, cols] = [out, in] of any tensor type, as the kernels read it.
// Values are one stream (row-major, or rows interleaved in blocks of `interleave` rows for a
// SIMD backend: quant/row_interleave.h, quant/q80_interleave.h); types with a separate scale
// stream (llama2.c q80) add `scales`. Either way, an interleaved block of rows starts where
// the same rows start in row-major order, so a view from row r0 (a multiple of interleave)
// is a plain pointer offset in both streams.
#pragma once

#include <cstddef>

#include "pocketlm/quant/tensor_type.h"

namespace pocketlm {

struct Matrix {
  TensorType type = TensorType::kF32;
  int rows = 0, cols = 0;
  const void* values = nullptr;
  const float* scales = nullptr;  // the separate scale stream; null for types without one
  int group = 0;                  // elements per block when the type's block is per tensor
  int interleave = 1;             // rows per interleaved block (1 = row-major)
  // Rows that stay in storage: values is null and the WeightSource that made this matrix
  // streams its rows (model/weight_stream.h) when the forward pass asks for them.
  const void* stream = nullptr;

  const float* f32() const { return static_cast<const float*>(values); }
};

// The rows [r0, rows) of m; r0 must be a multiple of m.interleave (or past the last full
// block, where rows are row-major).
inline Matrix rows_from(const Matrix& m, int r0) {
  Matrix v = m;
  const auto r = static_cast<std::size_t>(r0);
  v.values = static_cast<const unsigned char*>(m.values) + r * row_value_bytes(m.type, m.cols, m.group);
  if (m.scales) v.scales = m.scales + r * row_scale_bytes(m.type, m.cols, m.group) / sizeof(float);
  v.rows = m.rows - r0;
  return v;
}

// Dequantizes (or copies) row r into out[cols]: one embedding row per token, so that the
// table keeps its file type in memory.
inline void dequantize_matrix_row(const Matrix& m, int r, float* out) {
  type_traits(m.type).dequantize_row(m.values, m.scales, static_cast<std::size_t>(r),
                                     static_cast<std::size_t>(m.cols), static_cast<std::size_t>(m.rows),
                                     static_cast<std::size_t>(m.group), static_cast<std::size_t>(m.interleave), out);
}

}  // namespace pocketlm
