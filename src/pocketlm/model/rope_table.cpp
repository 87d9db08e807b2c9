#include "pocketlm/model/rope_table.h"

#include <cmath>

namespace pocketlm {

void fill_rope_table(int seq_len, int head_size, float theta, float* cos_table, float* sin_table) {
  const int half = head_size / 2;
  for (int pos = 0; pos < seq_len; ++pos) {
    for (int head_dim = 0; head_dim < head_size; head_dim += 2) {
      // run.c: freq = 1.0f / powf(10000.0f, head_dim / (float)head_size); val = pos * freq
      // (theta = 10000 for llama2.c models; GGUF carries its own).
      const float freq = 1.0f / std::pow(theta, static_cast<float>(head_dim) / static_cast<float>(head_size));
      const float val = static_cast<float>(pos) * freq;
      cos_table[pos * half + head_dim / 2] = std::cos(val);
      sin_table[pos * half + head_dim / 2] = std::sin(val);
    }
  }
}

void apply_rope(float* q, float* k, int dim, int kv_dim, int head_size, const float* cos_row, const float* sin_row) {
  for (int i = 0; i < dim; i += 2) {
    const float fcr = cos_row[(i % head_size) / 2];
    const float fci = sin_row[(i % head_size) / 2];
    const float q0 = q[i], q1 = q[i + 1];
    q[i] = q0 * fcr - q1 * fci;
    q[i + 1] = q0 * fci + q1 * fcr;
    if (i < kv_dim) {
      const float k0 = k[i], k1 = k[i + 1];
      k[i] = k0 * fcr - k1 * fci;
      k[i + 1] = k0 * fci + k1 * fcr;
    }
  }
}

}  // namespace pocketlm
