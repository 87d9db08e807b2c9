// ggml's Q8_0 blocks (GGUF type 8): 32 weights per block, stored as one little-endian fp16
// scale d followed by 32 int8 values q; weight = q * d. 34 bytes per block, blocks packed
// back to back along a row (a row is a whole number of blocks).
//
// Quantization (weights by `convert`, activations before every matmul over Q8_0 or Q4_0
// weights): amax = max |x| over the block; d = amax / 127; id = d ? 1 / d : 0;
// q = roundf(x * id) (half away from zero), NaN -> 0, clamped to [-127, 127]; the block stores
// fp16(d). This is ggml's reference rule (the unrounded d is used for q), written from its
// documented description.
#pragma once

#include <cstddef>
#include <cstdint>

namespace pocketlm {

inline constexpr int kQ8_0Block = 32;
inline constexpr std::size_t kQ8_0BlockBytes = 2 + 32;

// Quantizes n floats (a multiple of 32) into n / 32 blocks at out.
void quantize_q8_0(const float* x, std::size_t n, void* out);
// Dequantizes n values (a multiple of 32) starting at a block boundary.
void dequantize_q8_0(const void* blocks, std::size_t n, float* out);

}  // namespace pocketlm
