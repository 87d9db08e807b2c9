#include "pocketlm/kernels/gelu.h"

#include <cmath>
#include <cstdint>
#include <cstring>

namespace pocketlm {

namespace {

// e^y for y in [-87, 1]: y = k ln 2 + r with |r| <= ln 2 / 2 (Cody and Waite's two-part ln 2,
// whose high part has few enough bits that k * kLn2Hi is exact), e^r by its Taylor series to
// r^7 (error below 1e-7 relative), times 2^k built from exponent bits (k >= -126: normal).
float exp_small(float y) {
  constexpr float kLog2e = 1.44269504f;
  constexpr float kLn2Hi = 0.693145751953125f;
  constexpr float kLn2Lo = 1.428606765330187e-06f;
  const float k = std::floor(y * kLog2e + 0.5f);  // floor is exact on every IEEE libm
  const float r = (y - k * kLn2Hi) - k * kLn2Lo;
  float p = 1.0f / 5040.0f;
  p = p * r + 1.0f / 720.0f;
  p = p * r + 1.0f / 120.0f;
  p = p * r + 1.0f / 24.0f;
  p = p * r + 1.0f / 6.0f;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  const auto bits = static_cast<std::uint32_t>(static_cast<int>(k) + 127) << 23;
  float scale = 0.0f;
  std::memcpy(&scale, &bits, sizeof scale);
  return p * scale;
}

// erfc(a) for 0 <= a < 9: the Chebyshev fit of Numerical Recipes in C (2nd ed., section 6.2,
// erfcc), fractional error below 1.2e-7 everywhere: t = 1 / (1 + a / 2),
// erfc(a) = t exp(-a^2 + P(t)) with P of degree 9.
float erfc_nonnegative(float a) {
  static constexpr float kP[10] = {0.17087277f, -0.82215223f, 1.48851587f, -1.13520398f, 0.27886807f,
                                   -0.18628806f, 0.09678418f, 0.37409196f, 1.00002368f,  -1.26551223f};
  const float t = 1.0f / (1.0f + 0.5f * a);
  float p = kP[0];
  for (int i = 1; i < 10; ++i) p = p * t + kP[i];
  return t * exp_small(-a * a + p);  // -a^2 + p >= -81 - 1.3: exp_small's range
}

}  // namespace

float gelu(float x) {
  const float a = std::fabs(x) * 0.70710678f;  // |x| / sqrt(2)
  // erfc(9) is 4e-37: 1 + erf is 2 or 0 to float precision. Returned directly, so that
  // x = -inf never meets a 0 * inf.
  if (a >= 9.0f) return x > 0.0f ? x : -0.0f;
  const float e = erfc_nonnegative(a);
  // 1 + erf(x / sqrt 2) is 2 - erfc(a) for x >= 0 and erfc(a) for x < 0: no cancellation in
  // the negative tail.
  return x >= 0.0f ? 0.5f * x * (2.0f - e) : 0.5f * x * e;
}

}  // namespace pocketlm
