// The RNG and every sampling rule against llama2.c's run.c semantics (top-p: topp_test.cpp).
#include <gtest/gtest.h>

#include "pocketlm/kernels/kernels.h"
#include "pocketlm/sampling/sampler.h"

namespace pocketlm {
namespace {

TEST(Rng, MatchesXorshiftStarVectors) {
  // Computed independently (Python big integers) from llama2.c's random_u32 with seed 42.
  Rng rng(42);
  const std::uint32_t expected[] = {1456360119u, 3359763283u, 3393612768u, 4054632243u, 3283045847u};
  for (std::uint32_t e : expected) EXPECT_EQ(rng.next_u32(), e);
}

TEST(Rng, FloatIsTopTwentyFourBits) {
  Rng rng(42);
  EXPECT_EQ(rng.next_f32(), static_cast<float>(1456360119u >> 8) / 16777216.0f);
}

TEST(Argmax, FirstMaximumWins) {
  const float p[] = {0.1f, 0.4f, 0.4f, 0.1f};
  EXPECT_EQ(sample_argmax(p, 4), 1);
  const float neg[] = {-3.0f, -1.0f, -2.0f};
  EXPECT_EQ(sample_argmax(neg, 3), 1);
}

TEST(Multinomial, FirstIndexWhoseCdfExceedsCoin) {
  const float p[] = {0.25f, 0.25f, 0.5f};
  EXPECT_EQ(sample_mult(p, 3, 0.0f), 0);
  EXPECT_EQ(sample_mult(p, 3, 0.2499f), 0);
  EXPECT_EQ(sample_mult(p, 3, 0.25f), 1);  // cdf must exceed the coin strictly
  EXPECT_EQ(sample_mult(p, 3, 0.75f), 2);
  const float short_sum[] = {0.1f, 0.1f};  // rounding: the coin is past the whole CDF
  EXPECT_EQ(sample_mult(short_sum, 2, 0.9f), 1);
}

class SamplerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(arena_.init_owned(Sampler::scratch_bytes(4) + 64).ok());
    ASSERT_TRUE(sampler_.carve(4, arena_).ok());
  }
  Arena arena_;
  Sampler sampler_;
};

TEST_F(SamplerTest, TemperatureZeroIsArgmaxAndLeavesLogits) {
  sampler_.configure(SamplerParams{0.0f, 0.9f, 7}, reference_kernels());
  float logits[] = {1.0f, 3.0f, 2.0f, 3.0f};
  EXPECT_EQ(sampler_.sample(logits), 1);
  EXPECT_EQ(logits[1], 3.0f);
  EXPECT_EQ(sampler_.rng().state(), 7u);  // argmax draws no coin
}

TEST_F(SamplerTest, MultinomialWhenToppIsZeroOrOne) {
  for (float topp : {0.0f, 1.0f}) {
    sampler_.configure(SamplerParams{1.0f, topp, 42}, reference_kernels());
    float logits[] = {0.0f, 0.0f, 0.0f, 0.0f};  // uniform: the coin picks floor(coin * 4)
    const float coin = static_cast<float>(1456360119u >> 8) / 16777216.0f;  // 0.339...
    EXPECT_EQ(sampler_.sample(logits), static_cast<int>(coin * 4)) << topp;
    EXPECT_FLOAT_EQ(logits[0], 0.25f);  // logits became probabilities
  }
}

TEST_F(SamplerTest, TemperatureDividesLogitsBeforeSoftmax) {
  sampler_.configure(SamplerParams{0.5f, 0.0f, 42}, reference_kernels());
  float logits[] = {0.0f, 0.0f, 0.0f, 0.5f};
  sampler_.sample(logits);
  float expect[] = {0.0f, 0.0f, 0.0f, 1.0f};  // 0.5 / 0.5
  reference_kernels().softmax(expect, 4);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(logits[i], expect[i]);
}

}  // namespace
}  // namespace pocketlm
