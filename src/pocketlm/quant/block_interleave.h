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

// The general rule, for any block whose bytes split into fields: `head2` leading 2-byte fields
// (the fp16 scale; IQ4_XS's scale and high scale bits), then 4-byte fields. Field f at byte
// offset o of a block, of width w, is stored for row k at chunk + il*o + k*w: the il rows' copies
// of each field side by side. Q8_0 and Q4_0 (head2 = 1) give the layout above; IQ4_XS (head2 =
// 2) gives [il d][il scales_h][il x 4 bytes scales_l][32 groups of il x 4 bytes of nibbles].
inline std::size_t field_width(std::size_t o, std::size_t head2) { return o < 2 * head2 ? 2 : 4; }

// Rearranges il row-major rows of nb bs-byte blocks into one interleaved block of rows.
inline void interleave_block_fields(unsigned char* dst, const unsigned char* src, std::size_t nb, std::size_t bs,
                                    std::size_t head2, std::size_t il) {
  for (std::size_t k = 0; k < il; ++k)
    for (std::size_t g = 0; g < nb; ++g)
      for (std::size_t o = 0; o < bs; o += field_width(o, head2)) {
        const std::size_t w = field_width(o, head2);
        std::memcpy(dst + g * il * bs + il * o + k * w, src + (k * nb + g) * bs + o, w);
      }
}

// Block g of row r of a [d, ...] matrix of nb blocks a row stored with interleave il, copied back
// into its plain bs-byte form.
inline void copy_block_fields(const unsigned char* w, std::size_t r, std::size_t g, std::size_t nb, std::size_t d,
                              std::size_t bs, std::size_t head2, std::size_t il, unsigned char* block) {
  const std::size_t row_bytes = nb * bs;
  if (il == 1 || r >= d / il * il) {
    std::memcpy(block, w + r * row_bytes + g * bs, bs);
    return;
  }
  const std::size_t k = r % il;
  const unsigned char* chunk = w + (r - k) * row_bytes + g * il * bs;
  for (std::size_t o = 0; o < bs; o += field_width(o, head2)) {
    const std::size_t fw = field_width(o, head2);
    std::memcpy(block + o, chunk + il * o + k * fw, fw);
  }
}

// Q8_0 and Q4_0: rows of n / 32 blocks, one fp16 scale each.
inline void interleave_ggml_blocks(unsigned char* dst, const unsigned char* src, std::size_t n, std::size_t bs,
                                   std::size_t il) {
  interleave_block_fields(dst, src, n / 32, bs, 1, il);
}
inline void copy_ggml_block(const unsigned char* w, std::size_t r, std::size_t g, std::size_t n, std::size_t d,
                            std::size_t bs, std::size_t il, unsigned char* block) {
  copy_block_fields(w, r, g, n / 32, d, bs, 1, il, block);
}

// Writes il row-major rows of n halves into their interleaved block (element j of row k at
// j*il + k).
inline void interleave_halves(std::uint16_t* dst, const std::uint16_t* src, std::size_t n, std::size_t il) {
  for (std::size_t k = 0; k < il; ++k)
    for (std::size_t j = 0; j < n; ++j) dst[j * il + k] = src[k * n + j];
}

}  // namespace pocketlm
