// ggml's Q4_0 blocks (GGUF type 2): 32 weights per block, stored as one little-endian fp16
// scale d followed by 16 bytes; byte j holds weight j in its low nibble and weight j + 16 in
// its high nibble, each as q + 8 with q in [-8, 7]; weight = q * d. 18 bytes per block
// (4.5 bits per weight).
//
// Quantization (weights only; activations use Q8_0): m = the value of largest magnitude in
// the block (the first one on ties), d = m / -8, id = d ? 1 / d : 0, stored nibble =
// min(15, trunc(x * id + 8.5)) (NaN -> 0), and the block stores fp16(d). This is ggml's
// reference rule, written from its documented description: the extreme value maps exactly to
// q = -8, which gives the block one more level on that side.
#pragma once

#include <cstddef>
#include <cstdint>

namespace pocketlm {

inline constexpr int kQ4_0Block = 32;
inline constexpr std::size_t kQ4_0BlockBytes = 2 + 16;

// Quantizes n floats (a multiple of 32) into n / 32 blocks at out.
void quantize_q4_0(const float* x, std::size_t n, void* out);
// Dequantizes n values (a multiple of 32) starting at a block boundary.
void dequantize_q4_0(const void* blocks, std::size_t n, float* out);

// The 32 nibble values (q + 8, in [0, 15]) of one block's 16 bytes, in weight order.
inline void unpack_q4_0(const unsigned char* qs, std::uint8_t out[32]) {
  for (int j = 0; j < 16; ++j) {
    out[j] = static_cast<std::uint8_t>(qs[j] & 0x0F);
    out[j + 16] = static_cast<std::uint8_t>(qs[j] >> 4);
  }
}

}  // namespace pocketlm
