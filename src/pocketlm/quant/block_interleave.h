// Row-interleaved ggml block matrices (Q8_0, Q4_0: a 2-byte fp16 scale, then qb bytes of
// values per block of 32) and fp16 matrices. A SIMD backend computes il rows at once with one
// vector lane per row: it wants the il rows' scales of one block side by side (one load, one
// conversion) and, in each 32-bit lane, 4 value bytes of its own row, so that a multiply-add of
// the weights with 4 activation bytes broadcast to every lane leaves each row's partial sum in
// its own lane (no horizontal reduction). With interleave il, each full block of il rows (each
// row nb blocks of bs = 2 + qb bytes) is stored block index by block index:
//   chunk g of row block b at b*il*nb*bs + g*il*bs: [il fp16 scales][qb/4 groups of il x 4 bytes]
// so row k's scale of block g is at chunk + 2k and its value bytes 4t..4t+3 at
// chunk + 2*il + (t*il + k)*4. Row block b starts where row b*il starts in row-major order; the
// last d % il rows stay row-major. fp16 matrices interleave like fp32 ones
// (quant/row_interleave.h) with 2-byte elements.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace pocketlm {

// Rearranges il row-major rows (bs-byte blocks, n / 32 per row) into one interleaved block.
inline void interleave_ggml_blocks(unsigned char* dst, const unsigned char* src, std::size_t n, std::size_t bs,
                                   std::size_t il) {
  const std::size_t nb = n / 32, qb = bs - 2;
  for (std::size_t k = 0; k < il; ++k) {
    for (std::size_t g = 0; g < nb; ++g) {
      const unsigned char* from = src + (k * nb + g) * bs;
      unsigned char* chunk = dst + g * il * bs;
      std::memcpy(chunk + 2 * k, from, 2);
      for (std::size_t t = 0; t < qb / 4; ++t) std::memcpy(chunk + 2 * il + (t * il + k) * 4, from + 2 + 4 * t, 4);
    }
  }
}

// Block g of row r of a [d, n] matrix stored with interleave il, copied back into its plain
// bs-byte form (scale, then values).
inline void copy_ggml_block(const unsigned char* w, std::size_t r, std::size_t g, std::size_t n, std::size_t d,
                            std::size_t bs, std::size_t il, unsigned char* block) {
  const std::size_t nb = n / 32, row_bytes = nb * bs;
  if (il == 1 || r >= d / il * il) {
    std::memcpy(block, w + r * row_bytes + g * bs, bs);
    return;
  }
  const std::size_t k = r % il;
  const unsigned char* chunk = w + (r - k) * row_bytes + g * il * bs;
  std::memcpy(block, chunk + 2 * k, 2);
  for (std::size_t t = 0; t < (bs - 2) / 4; ++t) std::memcpy(block + 2 + 4 * t, chunk + 2 * il + (t * il + k) * 4, 4);
}

// Writes il row-major rows of n halves into their interleaved block (element j of row k at
// j*il + k).
inline void interleave_halves(std::uint16_t* dst, const std::uint16_t* src, std::size_t n, std::size_t il) {
  for (std::size_t k = 0; k < il; ++k)
    for (std::size_t j = 0; j < n; ++j) dst[j * il + k] = src[k * n + j];
}

}  // namespace pocketlm
