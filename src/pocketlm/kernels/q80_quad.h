// The float step of runq.c's q80 matmul for 4 rows at once, shared by the backends that read q80
// interleaved by 4 rows (quant/q80_interleave.h, il = 4: a group's 4 row scales side by side):
// tiled4 and cortex_m4. Per row and group, in group order,
//   acc = acc + ((float)isum * w_scale) * x_scale
// with isum the row's exact int32 group sum, as runq.c's matmul rounds it.
#pragma once

#include <cstdint>

namespace pocketlm {

struct Q80Quad {
  float a0 = 0.0f, a1 = 0.0f, a2 = 0.0f, a3 = 0.0f;

  // Adds one group: s0..s3 the 4 rows' int32 sums, sw their 4 scales, x_scale the activations'.
  void add(std::int32_t s0, std::int32_t s1, std::int32_t s2, std::int32_t s3, const float* sw, float x_scale) {
    a0 = a0 + (static_cast<float>(s0) * sw[0]) * x_scale;
    a1 = a1 + (static_cast<float>(s1) * sw[1]) * x_scale;
    a2 = a2 + (static_cast<float>(s2) * sw[2]) * x_scale;
    a3 = a3 + (static_cast<float>(s3) * sw[3]) * x_scale;
  }
  // Continues from out[0..4) (a float round trip: exact).
  void load(const float* out) {
    a0 = out[0];
    a1 = out[1];
    a2 = out[2];
    a3 = out[3];
  }
  void store(float* out) const {
    out[0] = a0;
    out[1] = a1;
    out[2] = a2;
    out[3] = a3;
  }
};

}  // namespace pocketlm
