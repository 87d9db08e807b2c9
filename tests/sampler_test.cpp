// The RNG and every sampling rule against llama2.c's run.c semantics.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

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

TEST(TopP, KeepsTheNucleusSortedByProbability) {
  // Sorted: 3 (0.4), 1 (0.3), 0 (0.2), 2 (0.1). topp 0.6: 0.4 + 0.3 = 0.7 > 0.6 ends at index 1.
  const float p[] = {0.2f, 0.3f, 0.1f, 0.4f};
  std::vector<ProbIndex> scratch(4);
  // r = coin * 0.7: below 0.4 -> token 3, else token 1; never 0 or 2.
  EXPECT_EQ(sample_topp(p, 4, 0.6f, scratch.data(), 0.0f), 3);
  EXPECT_EQ(sample_topp(p, 4, 0.6f, scratch.data(), 0.5f), 3);   // r = 0.35
  EXPECT_EQ(sample_topp(p, 4, 0.6f, scratch.data(), 0.6f), 1);   // r = 0.42
  EXPECT_EQ(sample_topp(p, 4, 0.6f, scratch.data(), 0.999f), 1);
}

TEST(TopP, TiesKeepIndexOrderAsGlibcStableQsort) {
  const float p[] = {0.25f, 0.25f, 0.25f, 0.25f};
  std::vector<ProbIndex> scratch(4);
  // All tie: order stays 0,1,2,3; topp 0.5 ends after 0.75 > 0.5 (index 2). r = coin * 0.75.
  EXPECT_EQ(sample_topp(p, 4, 0.5f, scratch.data(), 0.0f), 0);
  EXPECT_EQ(sample_topp(p, 4, 0.5f, scratch.data(), 0.5f), 1);  // r = 0.375
  EXPECT_EQ(sample_topp(p, 4, 0.5f, scratch.data(), 0.9f), 2);  // r = 0.675
}

TEST(TopP, CutoffDropsUnlikelyTokensBeforeSorting) {
  // cutoff = (1 - 0.9) / 3 = 0.0333: token 2 (0.01) is never a candidate.
  const float p[] = {0.5f, 0.49f, 0.01f, 0.0f};
  std::vector<ProbIndex> scratch(4);
  for (float coin : {0.0f, 0.5f, 0.99f, 0.999999f}) {
    const int t = sample_topp(p, 4, 0.9f, scratch.data(), coin);
    EXPECT_TRUE(t == 0 || t == 1) << coin;
  }
}

// run.c's top-p written out with a full stable sort, to check the heap version against.
int topp_by_full_sort(const std::vector<float>& probs, float topp, float coin) {
  const int n = static_cast<int>(probs.size());
  const float cutoff = (1.0f - topp) / static_cast<float>(n - 1);
  std::vector<ProbIndex> kept;
  for (int i = 0; i < n; ++i)
    if (probs[static_cast<std::size_t>(i)] >= cutoff) kept.push_back({probs[static_cast<std::size_t>(i)], i});
  if (kept.empty()) return sample_argmax(probs.data(), n);  // where run.c reads kept[-1]
  std::stable_sort(kept.begin(), kept.end(), [](const ProbIndex& a, const ProbIndex& b) { return a.prob > b.prob; });
  float cumulative = 0.0f;
  std::size_t last = kept.size() - 1;
  for (std::size_t i = 0; i < kept.size(); ++i) {
    cumulative += kept[i].prob;
    if (cumulative > topp) {
      last = i;
      break;
    }
  }
  const float r = coin * cumulative;
  float cdf = 0.0f;
  for (std::size_t i = 0; i <= last; ++i) {
    cdf += kept[i].prob;
    if (r < cdf) return kept[i].index;
  }
  return kept[last].index;
}

TEST(TopP, SameTokenAsAFullStableSort) {
  std::mt19937 rng(99);
  for (int trial = 0; trial < 300; ++trial) {
    const int n = 2 + static_cast<int>(rng() % 2000);
    std::vector<float> logits(static_cast<std::size_t>(n));
    // Coarse values make many exact ties; a wide range makes peaked and flat distributions.
    const float spread = static_cast<float>(1 + rng() % 12);
    for (float& l : logits) l = static_cast<float>(static_cast<int>(rng() % 16)) * spread / 4.0f;
    reference_kernels().softmax(logits.data(), n);
    std::vector<ProbIndex> scratch(static_cast<std::size_t>(n));
    for (float topp : {0.1f, 0.5f, 0.9f, 0.99f}) {
      const float coin = static_cast<float>(rng() >> 8) / 16777216.0f;
      EXPECT_EQ(sample_topp(logits.data(), n, topp, scratch.data(), coin), topp_by_full_sort(logits, topp, coin))
          << "trial " << trial << " topp " << topp;
    }
  }
}

class SamplerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(arena_.init_owned(1 << 12).ok());
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
