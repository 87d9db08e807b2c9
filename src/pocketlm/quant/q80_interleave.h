// Row-interleaved q8_0 matrices. A SIMD q8_0 matmul computes il rows at once, one vector lane
// per row; it wants, in each 32-bit lane, 4 value bytes of its own row, so that a multiply-add
// against 4 activation bytes broadcast leaves each row's partial sum in its own lane (no
// horizontal sums, which made an earlier kernel on whole-group rows compute-bound at DRAM's rate,
// bench/README.md), and the il rows' scales of a group side by side (one load, no gather).
// With interleave il, each full block of il rows is stored as quant/row_interleave.h stores
// fp32 rows, the values in 4-byte elements and the scales as they are:
//   value (r, j) at b*il*n + (j / 4)*il*4 + (r % il)*4 + j % 4
//   scale (r, g) at b*il*groups + g*il + r % il                          (groups = n / gs)
// (b = r / il), so block b starts where row b*il starts in row-major order; the last d % il
// rows follow row-major. il == 1 is the file's row-major layout; il > 1 needs gs % 4 == 0 (a
// lane never straddles two groups). il is 8 for 256-bit vectors, 16 for 512-bit ones
// (kernels/x86_q80.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "pocketlm/quant/row_interleave.h"

namespace pocketlm {

// Rows per interleaved block for a backend of `lanes` rows at group size gs: lanes where a group
// is whole 4-byte words (a lane never straddles two groups), else 1 (row-major).
constexpr int q80_interleave_rows(int gs, int lanes) { return gs % 4 == 0 ? lanes : 1; }

// Offset of value (k, j) (row k < il of the block, column j < n) from the block's start.
constexpr std::size_t q80_interleaved_offset(std::size_t k, std::size_t j, std::size_t il) {
  return (j / 4) * il * 4 + k * 4 + j % 4;
}

// Rearranges il row-major rows (values src_q[il * n], scales src_s[il * n / gs]) into one
// interleaved block.
inline void interleave_q80_block(std::int8_t* dst_q, float* dst_s, const std::int8_t* src_q, const float* src_s,
                                 std::size_t n, std::size_t gs, std::size_t il) {
  for (std::size_t k = 0; k < il; ++k)
    for (std::size_t j = 0; j < n; j += 4) std::memcpy(dst_q + q80_interleaved_offset(k, j, il), src_q + k * n + j, 4);
  interleave_block(dst_s, src_s, n / gs, il);
}

// Dequantizes row r of a [d, n] q8_0 matrix stored with interleave il into out[n]:
// out[j] = q * scale, as runq.c's dequantize().
inline void dequantize_interleaved_q80_row(const std::int8_t* q, const float* s, std::size_t r, std::size_t n,
                                           std::size_t d, std::size_t gs, std::size_t il, float* out) {
  const std::size_t groups = n / gs;
  if (il == 1 || r >= d / il * il) {
    for (std::size_t j = 0; j < n; ++j) out[j] = static_cast<float>(q[r * n + j]) * s[r * groups + j / gs];
    return;
  }
  const std::int8_t* block = q + (r / il) * il * n;
  const float* block_scales = s + (r / il) * il * groups;
  for (std::size_t j = 0; j < n; ++j)
    out[j] = static_cast<float>(block[q80_interleaved_offset(r % il, j, il)]) * block_scales[(j / gs) * il + r % il];
}

}  // namespace pocketlm
