#include "pocketlm/quant/q8_0.h"

#include <cmath>

#include "pocketlm/quant/fp16.h"
#include "pocketlm/quant/q80.h"

namespace pocketlm {

void quantize_q8_0(const float* x, std::size_t n, void* out) {
  auto* block = static_cast<unsigned char*>(out);
  for (std::size_t b = 0; b < n / kQ8_0Block; ++b, block += kQ8_0BlockBytes) {
    const float* xb = x + b * kQ8_0Block;
    float amax = 0.0f;
    for (int i = 0; i < kQ8_0Block; ++i) {
      const float v = std::fabs(xb[i]);
      if (v > amax) amax = v;  // a NaN never becomes the max
    }
    const float d = amax / 127.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    store_fp16(block, fp32_to_fp16(d));
    auto* q = reinterpret_cast<std::int8_t*>(block + 2);
    for (int i = 0; i < kQ8_0Block; ++i) q[i] = clamp_q80(std::round(xb[i] * id));
  }
}

void dequantize_q8_0(const void* blocks, std::size_t n, float* out) {
  const auto* block = static_cast<const unsigned char*>(blocks);
  for (std::size_t b = 0; b < n / kQ8_0Block; ++b, block += kQ8_0BlockBytes) {
    const float d = fp16_to_fp32(load_fp16(block));
    const auto* q = reinterpret_cast<const std::int8_t*>(block + 2);
    for (int i = 0; i < kQ8_0Block; ++i) out[b * kQ8_0Block + i] = static_cast<float>(q[i]) * d;
  }
}

}  // namespace pocketlm
