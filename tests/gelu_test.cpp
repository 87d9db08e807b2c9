// The engine's own GELU (kernels/gelu.h, the per-layer-embedding kind's gate): against the exact
// erf form to about one ulp, and no trapped FP exception on special values.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>
#include <cfenv>
#include <cfloat>
#include <limits>

#include "pocketlm/kernels/gelu.h"
#include "ple_file.h"
#include "test_support.h"

namespace pocketlm {
namespace {

using test::ple::exact_gelu;


TEST(Gelu, IsTheErfFormToAboutOneUlp) {
  double worst = 0.0;
  for (float x = -14.0f; x <= 14.0f; x += 1.0f / 1024) {
    const double err = std::fabs(gelu(x) - exact_gelu(x)) / std::fmax(1.0, std::fabs(x));
    worst = std::fmax(worst, err);
  }
  EXPECT_LT(worst, 1.2e-7);
  // The negative tail, where the value is tiny, keeps its relative precision.
  for (float x : {-3.0f, -5.0f, -7.5f, -10.0f})
    EXPECT_NEAR(gelu(x) / exact_gelu(x), 1.0, 3e-6) << x;
}

TEST(Gelu, SpecialValuesRaiseNoTrappedException) {
  // The PSP's FPU traps on overflow, invalid and divide-by-zero: none may happen.
  std::feclearexcept(FE_ALL_EXCEPT);
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(gelu(inf), inf);
  EXPECT_EQ(gelu(-inf), 0.0f);
  EXPECT_TRUE(std::signbit(gelu(-inf)));
  EXPECT_EQ(gelu(FLT_MAX), FLT_MAX);
  EXPECT_EQ(gelu(-FLT_MAX), 0.0f);
  EXPECT_EQ(gelu(0.0f), 0.0f);
  EXPECT_EQ(gelu(FLT_MIN), 0.5f * FLT_MIN);
  for (float x = -30.0f; x <= 30.0f; x += 0.001f) (void)gelu(x);
  EXPECT_FALSE(std::fetestexcept(FE_OVERFLOW | FE_INVALID | FE_DIVBYZERO));
  EXPECT_TRUE(std::isnan(gelu(std::numeric_limits<float>::quiet_NaN())));
}

}  // namespace
}  // namespace pocketlm
