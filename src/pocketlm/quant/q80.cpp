#include "pocketlm/quant/q80.h"

#include <cmath>

namespace pocketlm {

void quantize_q80_activations(const float* x, int n, int group_size, std::int8_t* q, float* s) {
  const int groups = n / group_size;
  for (int g = 0; g < groups; ++g) {
    const float* xg = x + g * group_size;
    float wmax = 0.0f;
    for (int i = 0; i < group_size; ++i) {
      const float v = std::fabs(xg[i]);
      if (v > wmax) wmax = v;
    }
    const float scale = wmax / 127.0f;
    s[g] = scale;
    std::int8_t* qg = q + g * group_size;
    if (scale == 0.0f) {
      for (int i = 0; i < group_size; ++i) qg[i] = 0;
      continue;
    }
    for (int i = 0; i < group_size; ++i) qg[i] = clamp_q80(std::round(xg[i] / scale));
  }
}

void dequantize_q80(const std::int8_t* q, const float* s, int n, int group_size, float* out) {
  for (int i = 0; i < n; ++i) out[i] = static_cast<float>(q[i]) * s[i / group_size];
}

float quantize_q80_weights(const float* w, std::uint64_t n, int group_size, std::int8_t* q, float* s) {
  float max_err = 0.0f;
  const std::uint64_t gs = static_cast<std::uint64_t>(group_size);
  for (std::uint64_t g = 0; g < n / gs; ++g) {
    const float* wg = w + g * gs;
    float wmax = 0.0f;
    for (std::uint64_t i = 0; i < gs; ++i) {
      const float v = std::fabs(wg[i]);
      if (v > wmax) wmax = v;
    }
    const float scale = wmax / 127.0f;
    s[g] = scale;
    for (std::uint64_t i = 0; i < gs; ++i) {
      // std::nearbyint rounds half to even under the default rounding mode, like numpy.round.
      const float qv = scale == 0.0f ? 0.0f : std::nearbyint(wg[i] / scale);
      q[g * gs + i] = static_cast<std::int8_t>(qv);
      const float err = std::fabs(wg[i] - qv * scale);
      if (err > max_err) max_err = err;
    }
  }
  return max_err;
}

}  // namespace pocketlm
