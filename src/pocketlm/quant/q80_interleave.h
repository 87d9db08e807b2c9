// Row-interleaved q8_0 matrices. A SIMD q8_0 matmul computes several rows at once; reading
// them from one sequential stream (instead of one short stream per row) lets the hardware
// prefetcher keep up, and puts the rows' scales of a group side by side (one load, no
// gather). With interleave il, each full block of il rows is stored group by group:
//   value (r, j) at b*il*n + (j / gs)*il*gs + (r % il)*gs + j % gs      (b = r / il)
//   scale (r, g) at b*il*groups + g*il + r % il                          (groups = n / gs)
// so block b starts where row b*il starts in row-major order; the last d % il rows follow
// row-major. il == 1 is the file's row-major layout.
#pragma once

#include <cstddef>
#include <cstdint>

namespace pocketlm {

// Rearranges il row-major rows (values src_q[il * n], scales src_s[il * n / gs]) into one
// interleaved block.
inline void interleave_q80_block(std::int8_t* dst_q, float* dst_s, const std::int8_t* src_q, const float* src_s,
                                 std::size_t n, std::size_t gs, std::size_t il) {
  const std::size_t groups = n / gs;
  for (std::size_t k = 0; k < il; ++k) {
    for (std::size_t g = 0; g < groups; ++g) {
      for (std::size_t i = 0; i < gs; ++i) dst_q[(g * il + k) * gs + i] = src_q[k * n + g * gs + i];
      dst_s[g * il + k] = src_s[k * groups + g];
    }
  }
}

// Dequantizes row r of a [d, n] q8_0 matrix stored with interleave il into out[n]:
// out[j] = q * scale, as runq.c's dequantize().
inline void dequantize_interleaved_q80_row(const std::int8_t* q, const float* s, std::size_t r, std::size_t n,
                                           std::size_t d, std::size_t gs, std::size_t il, float* out) {
  const std::size_t groups = n / gs;
  const bool row_major = il == 1 || r >= d / il * il;
  for (std::size_t g = 0; g < groups; ++g) {
    const std::int8_t* qg = row_major ? q + r * n + g * gs : q + (r / il) * il * n + (g * il + r % il) * gs;
    const float scale = row_major ? s[r * groups + g] : s[(r / il) * il * groups + g * il + r % il];
    for (std::size_t i = 0; i < gs; ++i) out[g * gs + i] = static_cast<float>(qg[i]) * scale;
  }
}

}  // namespace pocketlm
