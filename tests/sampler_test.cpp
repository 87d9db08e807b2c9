// The RNG and the Sampler against llama2.c's run.c semantics, and its defined answers where
// run.c has none (non-finite softmax). Top-p itself: topp_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "pocketlm/kernels/kernels.h"
#include "pocketlm/sampling/sampler.h"
#include "pocketlm/sampling/scan.h"
#include "pocketlm/sampling/softmax.h"

namespace pocketlm {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

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

TEST(Argmax, LongRowsAndEdgeValues) {
  // Past the search's 64-value blocks: the first maximum in a later block, ties across blocks.
  std::vector<float> v(200, -1.0f);
  v[150] = 2.0f;
  v[190] = 2.0f;
  v[3] = kNaN;
  EXPECT_EQ(sample_argmax(v.data(), 200), 150);
  const float zeros[] = {-0.0f, 0.0f};  // equal values: the first
  EXPECT_EQ(sample_argmax(zeros, 2), 0);
  const float nan_then_ninf[] = {kNaN, -kInf, -kInf};
  EXPECT_EQ(sample_argmax(nan_then_ninf, 3), 1);
}

TEST(Argmax, NaNNeverWins) {
  const float first_nan[] = {kNaN, 1.0f, 3.0f, 2.0f, 3.0f};
  EXPECT_EQ(sample_argmax(first_nan, 5), 2);  // run.c would answer 0 here
  const float inner_nan[] = {1.0f, kNaN, 0.5f};
  EXPECT_EQ(sample_argmax(inner_nan, 3), 0);
  const float all_nan[] = {kNaN, kNaN};
  EXPECT_EQ(sample_argmax(all_nan, 2), 0);
  const float infinities[] = {-kInf, kInf, kNaN, kInf};
  EXPECT_EQ(sample_argmax(infinities, 4), 1);
  const float minus_inf[] = {-kInf, -kInf};
  EXPECT_EQ(sample_argmax(minus_inf, 2), 0);
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

TEST(Scan, MaxIgnoresNaNAndNaNIsSeenAnywhere) {
  std::vector<float> v(37, -5.0f);  // not a multiple of the 8 lanes: the tail loop counts
  EXPECT_EQ(max_ignoring_nan(v.data(), 37), -5.0f);
  EXPECT_FALSE(any_nan(v.data(), 37));
  for (int at : {0, 7, 8, 31, 32, 36}) {
    std::vector<float> w = v;
    w[static_cast<std::size_t>(at)] = 2.0f;
    EXPECT_EQ(max_ignoring_nan(w.data(), 37), 2.0f) << at;
    w[static_cast<std::size_t>(at)] = kNaN;
    EXPECT_EQ(max_ignoring_nan(w.data(), 37), -5.0f) << at;
    EXPECT_TRUE(any_nan(w.data(), 37)) << at;
  }
  const float nans[] = {kNaN, kNaN};
  EXPECT_EQ(max_ignoring_nan(nans, 2), -kInf);
  EXPECT_EQ(max_ignoring_nan(nans, 0), -kInf);
}

// run.c: logits[q] /= T, then the reference softmax.
std::vector<float> runc_probs(std::vector<float> logits, float t) {
  for (float& l : logits) l /= t;
  reference_kernels().softmax(logits.data(), static_cast<int>(logits.size()));
  return logits;
}

TEST(SoftmaxTempered, BitIdenticalToDivisionThenReferenceSoftmax) {
  std::mt19937 rng(5);
  std::normal_distribution<float> g(0.0f, 3.0f);
  for (int trial = 0; trial < 200; ++trial) {
    const int n = 1 + static_cast<int>(rng() % 600);
    std::vector<float> logits(static_cast<std::size_t>(n));
    for (float& l : logits) l = g(rng);
    if (trial % 5 == 0) logits[rng() % logits.size()] = -kInf;  // exp(-inf) = 0
    if (trial % 7 == 0) logits[0] = logits.back();               // a tie at the max
    // Temperatures from huge to tiny (tiny: negative logits / T overflow to -inf; the
    // largest stays finite while max / T does).
    const float temps[] = {1.0f, 0.8f, 1e-3f, 37.0f, 1e30f, kInf, 1e-37f};
    const float t = temps[trial % 7];
    const float max_logit = max_ignoring_nan(logits.data(), n);
    if (!std::isfinite(max_logit / t) || (std::isinf(t) && trial % 5 == 0)) continue;  // -inf / inf: NaN
    const std::vector<float> want = runc_probs(logits, t);
    for (const char* const* name = kernel_names(); *name; ++name) {  // each backend's expf
      const Kernels* kernels = find_kernels(*name);
      if (!kernels) continue;
      std::vector<float> got = logits;
      const float largest = softmax_tempered(got.data(), n, t, max_logit, kernels->exp_sum);
      ASSERT_EQ(std::bit_cast<std::uint32_t>(largest), std::bit_cast<std::uint32_t>(max_ignoring_nan(got.data(), n)))
          << *name << " trial " << trial << " T " << t;
      for (int i = 0; i < n; ++i) {
        ASSERT_EQ(std::bit_cast<std::uint32_t>(got[static_cast<std::size_t>(i)]),
                  std::bit_cast<std::uint32_t>(want[static_cast<std::size_t>(i)]))
            << *name << " trial " << trial << " T " << t << " i " << i;
      }
    }
  }
}

class SamplerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(arena_.init_owned(Sampler::scratch_bytes(kVocab) + 64).ok());
    ASSERT_TRUE(sampler_.carve(kVocab, arena_).ok());
  }
  static constexpr int kVocab = 4;
  Arena arena_;
  Sampler sampler_;
};

TEST_F(SamplerTest, TemperatureZeroIsArgmaxAndLeavesLogits) {
  sampler_.configure(SamplerParams{0.0f, 0.9f, 7}, reference_kernels());
  float logits[] = {1.0f, 3.0f, 2.0f, 3.0f};
  EXPECT_EQ(sampler_.sample(logits), 1);
  EXPECT_EQ(logits[1], 3.0f);
  EXPECT_EQ(sampler_.rng().state(), 7u);  // argmax draws no coin
  EXPECT_EQ(sampler_.last_outcome(), SampleOutcome::kSampled);
}

TEST_F(SamplerTest, NegativeOrNaNTemperatureIsGreedyAsAfterRunCsClamp) {
  for (float t : {-1.0f, -1e-45f, kNaN}) {
    sampler_.configure(SamplerParams{t, 0.9f, 7}, reference_kernels());
    float logits[] = {1.0f, 3.0f, 2.0f, 3.0f};
    EXPECT_EQ(sampler_.sample(logits), 1) << t;
    EXPECT_EQ(logits[0], 1.0f) << t;
    EXPECT_EQ(sampler_.rng().state(), 7u) << t;
  }
}

TEST_F(SamplerTest, MultinomialWhenToppIsZeroOrOne) {
  for (float topp : {0.0f, 1.0f, kNaN}) {
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

TEST_F(SamplerTest, OverflowingTemperatureIsTheGreedyLimit) {
  // 30 / 2e-38 = 1.5e39 overflows: run.c's softmax is NaN there (inf - inf).
  sampler_.configure(SamplerParams{2e-38f, 0.9f, 7}, reference_kernels());
  float logits[] = {10.0f, 30.0f, 20.0f, 30.0f};
  EXPECT_EQ(sampler_.sample(logits), 1);
  EXPECT_EQ(sampler_.last_outcome(), SampleOutcome::kGreedyLimit);
  EXPECT_EQ(sampler_.greedy_limit_samples(), 1);
  EXPECT_EQ(logits[0], 10.0f);  // left unchanged
  EXPECT_EQ(sampler_.rng().state(), 7u);  // no coin, as at temperature 0
  // All negative: max / T = -inf overflows the other way (-inf - -inf is NaN too).
  float negative[] = {-30.0f, -10.0f, -20.0f, -10.0f};
  EXPECT_EQ(sampler_.sample(negative), 1);
  EXPECT_EQ(sampler_.greedy_limit_samples(), 2);
  // configure() restarts the count.
  sampler_.configure(SamplerParams{2e-38f, 0.9f, 7}, reference_kernels());
  EXPECT_EQ(sampler_.greedy_limit_samples(), 0);
}

TEST_F(SamplerTest, SubnormalTemperatureIsAlwaysTheGreedyLimit) {
  EXPECT_TRUE(temperature_is_greedy_limit(1e-45f));
  EXPECT_TRUE(temperature_is_greedy_limit(std::nextafter(std::numeric_limits<float>::min(), 0.0f)));
  EXPECT_FALSE(temperature_is_greedy_limit(std::numeric_limits<float>::min()));
  EXPECT_FALSE(temperature_is_greedy_limit(0.0f));
  EXPECT_FALSE(temperature_is_greedy_limit(-1e-45f));
  EXPECT_FALSE(temperature_is_greedy_limit(1.0f));
  // Logits of 0 would not overflow (0 / T = 0), yet a subnormal T still means greedy.
  sampler_.configure(SamplerParams{1e-45f, 0.9f, 7}, reference_kernels());
  float zeros[] = {0.0f, 0.0f, 0.0f, 0.0f};
  EXPECT_EQ(sampler_.sample(zeros), 0);
  EXPECT_EQ(sampler_.last_outcome(), SampleOutcome::kGreedyLimit);
  float logits[] = {0.1f, -0.2f, 0.3f, 0.25f};
  EXPECT_EQ(sampler_.sample(logits), 2);
  EXPECT_EQ(sampler_.greedy_limit_samples(), 2);
}

TEST_F(SamplerTest, SmallTemperatureWithAFiniteMaximumStaysRunC) {
  // The largest scaled logit (0.5e-30 / 1e-30 = 0.5) is finite; -1e10 / 1e-30 overflows to
  // -inf, which run.c's softmax maps to probability 0. Ids 0 and 1 tie: a real sample.
  const float t = 1e-30f;
  const std::vector<float> raw = {0.5e-30f, 0.5e-30f, -1e10f, 0.0f};
  Rng coins(42);
  const std::vector<float> probs = runc_probs(raw, t);
  const int want = sample_mult(probs.data(), kVocab, coins.next_f32());
  sampler_.configure(SamplerParams{t, 0.0f, 42}, reference_kernels());
  std::vector<float> logits = raw;
  EXPECT_EQ(sampler_.sample(logits.data()), want);
  EXPECT_EQ(sampler_.last_outcome(), SampleOutcome::kSampled);
  EXPECT_EQ(logits[2], 0.0f);
}

TEST_F(SamplerTest, NonFiniteLogitsAnswerTheArgmaxOfTheNonNaNOnes) {
  struct Case {
    float logits[kVocab];
    int want;
  };
  const Case cases[] = {
      {{0.1f, kNaN, 0.7f, 0.2f}, 2},      // run.c: every probability NaN
      {{kNaN, kNaN, kNaN, kNaN}, 0},      // nothing to choose from: id 0
      {{0.1f, kInf, 0.7f, kInf}, 1},      // inf - inf
      {{-kInf, -kInf, -kInf, -kInf}, 0},  // -inf - -inf
      {{kNaN, -kInf, 3.0f, kInf}, 3},
  };
  for (float topp : {0.9f, 0.0f}) {
    sampler_.configure(SamplerParams{1.0f, topp, 7}, reference_kernels());
    int count = 0;
    for (const Case& c : cases) {
      float logits[kVocab];
      std::copy(c.logits, c.logits + kVocab, logits);
      EXPECT_EQ(sampler_.sample(logits), c.want) << "case " << count;
      EXPECT_EQ(sampler_.last_outcome(), SampleOutcome::kNonFiniteLogits);
      EXPECT_EQ(sampler_.nonfinite_samples(), ++count);
    }
    EXPECT_EQ(sampler_.rng().state(), 7u);
    EXPECT_EQ(sampler_.greedy_limit_samples(), 0);
  }
  // Some -inf logits next to finite ones are fine for run.c: probability 0, a real sample.
  // At T = +inf too (where -inf / inf would be NaN, FLT_MAX stands in for T).
  for (float t : {1.0f, kInf}) {
    sampler_.configure(SamplerParams{t, 0.9f, 7}, reference_kernels());
    float logits[] = {-kInf, 1.0f, -kInf, 1.0f};
    const int id = sampler_.sample(logits);
    EXPECT_TRUE(id == 1 || id == 3) << t;
    EXPECT_EQ(sampler_.last_outcome(), SampleOutcome::kSampled);
    EXPECT_EQ(logits[0], 0.0f);
    EXPECT_EQ(logits[1], 0.5f);
  }
}

// run.c's sample() spelled out: division, reference softmax, one coin, multinomial or the
// full-sort top-p.
int runc_sample(const std::vector<float>& logits, float t, float topp, Rng& rng) {
  const int n = static_cast<int>(logits.size());
  if (t == 0.0f) return sample_argmax(logits.data(), n);
  const std::vector<float> probs = runc_probs(logits, t);
  const float coin = rng.next_f32();
  if (topp <= 0.0f || topp >= 1.0f) return sample_mult(probs.data(), n, coin);
  std::vector<ProbIndex> pairs(static_cast<std::size_t>(n));
  return sample_topp_sorted(probs.data(), n, topp, pairs.data(), coin);
}

TEST(SamplerVsRunC, SameTokensOverManySteps) {
  std::mt19937 gen(11);
  for (int n : {1, 2, 17, 512, 4099}) {
    Arena arena;
    ASSERT_TRUE(arena.init_owned(Sampler::scratch_bytes(n) + 64).ok());
    Sampler sampler;
    ASSERT_TRUE(sampler.carve(n, arena).ok());
    for (float t : {0.0f, 0.3f, 1.0f, 1.7f})
      for (float topp : {0.0f, 0.5f, 0.9f, 0.99f, 1.0f}) {
        sampler.configure(SamplerParams{t, topp, 1234}, reference_kernels());
        Rng rng(1234);
        std::normal_distribution<float> g(0.0f, 1.0f + static_cast<float>(gen() % 6));
        for (int step = 0; step < 20; ++step) {
          std::vector<float> logits(static_cast<std::size_t>(n));
          for (float& l : logits) l = g(gen);
          const int want = runc_sample(logits, t, topp, rng);
          ASSERT_EQ(sampler.sample(logits.data()), want) << "n " << n << " T " << t << " topp " << topp;
          ASSERT_EQ(sampler.last_outcome(), SampleOutcome::kSampled);
        }
        ASSERT_EQ(sampler.rng().state(), rng.state());
      }
  }
}

}  // namespace
}  // namespace pocketlm
