// ggml's IQ4_XS blocks (GGUF type 23): super-blocks of 256 weights in 136 bytes (4.25 bits
// per weight), laid out as
//   [0, 2)    d         little-endian fp16, the super-block scale
//   [2, 4)    scales_h  little-endian uint16: bits 2*ib and 2*ib + 1 are the high 2 bits of
//                       sub-block ib's 6-bit scale
//   [4, 8)    scales_l  byte ib / 2, nibble ib % 2 (low nibble first): its low 4 bits
//   [8, 136)  qs        16 bytes per sub-block of 32: byte j holds weight j in its low nibble
//                       and weight j + 16 in its high nibble (as Q4_0)
// With ls the 6-bit scale of sub-block ib and q a nibble, weight = dl * kIQ4NLValues[q] where
// dl = d * (float)(ls - 32), both products rounded to float as ggml's dequantize_row_iq4_xs
// does (dl first, then dl times the grid value).
//
// Quantization (weights only; activations use Q8_0) is pocketlm's own, deterministic:
// 1. Per sub-block, candidate scales s = m / v with m the value of largest magnitude (the
//    first on ties) and v each grid value of magnitude >= 49 or the midpoint of two such
//    neighbours; each candidate assigns every value its nearest grid point (the lower on a
//    tie); the sub-block keeps the least-squares scale sum(x*g) / sum(g*g) of the candidate
//    whose assignment has the smallest squared error (the first on ties).
// 2. d = fp16(M / -32) with M the kept sub-scale of largest magnitude, so that the largest
//    maps to ls - 32 = -32; each sub-block's ls - 32 = round(s / d) clamped to [-32, 31].
// 3. Every value is assigned again, to the nearest grid point of x / dl with the stored dl.
// A block whose values are exactly representable (its largest sub-scale at ls - 32 = -32 and
// each sub-block's largest value on a grid point of magnitude >= 49) round-trips to its bytes.
#pragma once

#include <cstddef>
#include <cstdint>

namespace pocketlm {

inline constexpr int kIQ4_XSBlock = 256;
inline constexpr int kIQ4_XSSubBlock = 32;
inline constexpr std::size_t kIQ4_XSBlockBytes = 2 + 2 + 4 + 128;
// Bytes before qs: d, scales_h, scales_l (TypeTraits::inline_scale_bytes).
inline constexpr int kIQ4_XSScaleBytes = 8;

// ggml's kvalues_iq4nl: the non-linear grid a nibble indexes (sorted ascending).
inline constexpr std::int8_t kIQ4NLValues[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                                                 1,    13,   25,  38,  53,  69,  89,  113};

// Sub-block ib's 6-bit scale ls (0..63; the multiplier is ls - 32) of the block at `block`.
inline int iq4_xs_scale(const unsigned char* block, int ib) {
  const unsigned h = static_cast<unsigned>(block[2]) | static_cast<unsigned>(block[3]) << 8;
  const unsigned lo = (block[4 + ib / 2] >> (4 * (ib % 2))) & 0x0Fu;
  return static_cast<int>(lo | ((h >> (2 * ib)) & 3u) << 4);
}

// Quantizes n floats (a multiple of 256) into n / 256 blocks at out.
void quantize_iq4_xs(const float* x, std::size_t n, void* out);
// Dequantizes n values (a multiple of 256) starting at a block boundary.
void dequantize_iq4_xs(const void* blocks, std::size_t n, float* out);

}  // namespace pocketlm
