// Row-interleaved fp32 matrices. A vectorised fp32 matmul stays bit-exact when each SIMD lane
// computes one output row, summing in index order; it then wants w[r..r+il)[j] contiguous.
// With interleave il, every full block of il rows is stored column by column:
//   element (r, j) of block b = r / il lives at b*il*n + j*il + r % il,
// and the last d % il rows follow row-major. il == 1 is plain row-major.
#pragma once

#include <cstddef>
#include <cstring>

namespace pocketlm {

// Index of element (r, j) of a [d, n] matrix stored with interleave il.
inline std::size_t interleaved_index(std::size_t r, std::size_t j, std::size_t n, std::size_t d, std::size_t il) {
  const std::size_t full = d / il * il;
  if (r >= full) return r * n + j;
  return (r / il) * il * n + j * il + r % il;
}

// Writes `il` row-major rows src[il, n] into their interleaved block at dst (il * n floats).
inline void interleave_block(float* dst, const float* src, std::size_t n, std::size_t il) {
  for (std::size_t k = 0; k < il; ++k)
    for (std::size_t j = 0; j < n; ++j) dst[j * il + k] = src[k * n + j];
}

// Copies row r (n values) of a [d, n] matrix stored with interleave il into out.
inline void copy_interleaved_row(const float* w, std::size_t r, std::size_t n, std::size_t d, std::size_t il,
                                 float* out) {
  if (il == 1 || r >= d / il * il) {
    std::memcpy(out, w + r * n, n * sizeof(float));
    return;
  }
  const float* base = w + (r / il) * il * n + r % il;
  for (std::size_t j = 0; j < n; ++j) out[j] = base[j * il];
}

}  // namespace pocketlm
