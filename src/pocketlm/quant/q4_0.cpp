#include "pocketlm/quant/q4_0.h"

#include <cmath>

#include "pocketlm/quant/fp16.h"

namespace pocketlm {

namespace {

// min(15, trunc(v)) for v = x * id + 8.5, without undefined float-to-int casts (NaN -> 0).
unsigned nibble(float v) {
  if (!(v > 0.0f)) return 0;
  if (v >= 15.0f) return 15;
  return static_cast<unsigned>(v);
}

}  // namespace

void quantize_q4_0(const float* x, std::size_t n, void* out) {
  auto* block = static_cast<unsigned char*>(out);
  for (std::size_t b = 0; b < n / kQ4_0Block; ++b, block += kQ4_0BlockBytes) {
    const float* xb = x + b * kQ4_0Block;
    float amax = 0.0f, max = 0.0f;
    for (int i = 0; i < kQ4_0Block; ++i) {
      const float v = std::fabs(xb[i]);
      if (amax < v) {
        amax = v;
        max = xb[i];
      }
    }
    const float d = max / -8.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    store_fp16(block, fp32_to_fp16(d));
    for (int j = 0; j < 16; ++j) {
      const unsigned lo = nibble(xb[j] * id + 8.5f);
      const unsigned hi = nibble(xb[j + 16] * id + 8.5f);
      block[2 + j] = static_cast<unsigned char>(lo | (hi << 4));
    }
  }
}

void dequantize_q4_0(const void* blocks, std::size_t n, float* out) {
  const auto* block = static_cast<const unsigned char*>(blocks);
  for (std::size_t b = 0; b < n / kQ4_0Block; ++b, block += kQ4_0BlockBytes) {
    const float d = fp16_to_fp32(load_fp16(block));
    float* o = out + b * kQ4_0Block;
    for (int j = 0; j < 16; ++j) {
      o[j] = static_cast<float>(static_cast<int>(block[2 + j] & 0x0F) - 8) * d;
      o[j + 16] = static_cast<float>(static_cast<int>(block[2 + j] >> 4) - 8) * d;
    }
  }
}

}  // namespace pocketlm
