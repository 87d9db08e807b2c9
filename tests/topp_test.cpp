// Top-p: the radix version (sample_topp) against run.c's rule written out with a full sort
// (sample_topp_sorted), on hand-checked cases and on random and adversarial distributions.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "pocketlm/kernels/kernels.h"
#include "pocketlm/sampling/sampler.h"
#include "pocketlm/sampling/topp.h"

namespace pocketlm {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// Scratch for both versions, sized like the Sampler's.
class ToppRunner {
 public:
  explicit ToppRunner(int n)
      : memory_(Sampler::scratch_bytes(n) / sizeof(std::uint32_t)), pairs_(static_cast<std::size_t>(n)) {
    scratch_ = topp_scratch_at(memory_.data(), n);
  }
  int fast(const std::vector<float>& p, float topp, float coin) {
    return sample_topp(p.data(), static_cast<int>(p.size()), topp, scratch_, coin);
  }
  int sorted(const std::vector<float>& p, float topp, float coin) {
    return sample_topp_sorted(p.data(), static_cast<int>(p.size()), topp, pairs_.data(), coin);
  }

 private:
  std::vector<std::uint32_t> memory_;
  std::vector<ProbIndex> pairs_;
  ToppScratch scratch_;
};

// Both versions must give `expected`.
void expect_token(const std::vector<float>& p, float topp, float coin, int expected) {
  ToppRunner run(static_cast<int>(p.size()));
  EXPECT_EQ(run.sorted(p, topp, coin), expected) << "oracle, topp " << topp << " coin " << coin;
  EXPECT_EQ(run.fast(p, topp, coin), expected) << "radix, topp " << topp << " coin " << coin;
}

// The coins of a test: a grid of `steps` over [0, 1) plus the largest coin below 1.
std::vector<float> coins(int steps = 64) {
  std::vector<float> c;
  for (int i = 0; i < steps; ++i) c.push_back(static_cast<float>(i) / static_cast<float>(steps));
  c.push_back(std::nextafter(1.0f, 0.0f));
  return c;
}

// Fast == oracle for every coin of coins(steps) and each topp.
void expect_same(const std::vector<float>& p, const std::vector<float>& topps, const char* what, int steps = 64) {
  ToppRunner run(static_cast<int>(p.size()));
  for (float topp : topps)
    for (float coin : coins(steps)) {
      const int want = run.sorted(p, topp, coin);
      const int got = run.fast(p, topp, coin);
      ASSERT_EQ(got, want) << what << ": n " << p.size() << " topp " << topp << " coin " << coin;
      ASSERT_GE(got, 0);
      ASSERT_LT(got, static_cast<int>(p.size()));
    }
}

std::vector<float> softmax_of(std::vector<float> logits) {
  reference_kernels().softmax(logits.data(), static_cast<int>(logits.size()));
  return logits;
}

const std::vector<float> kTopps = {1e-45f, 1e-7f, 0.1f, 0.5f, 0.9f, 0.95f, 0.999f, std::nextafter(1.0f, 0.0f)};

TEST(TopP, KeepsTheNucleusSortedByProbability) {
  // Sorted: 3 (0.4), 1 (0.3), 0 (0.2), 2 (0.1). topp 0.6: 0.4 + 0.3 = 0.7 > 0.6 ends at id 1;
  // r = coin * 0.7: below 0.4 -> token 3, else token 1; never 0 or 2.
  const std::vector<float> p = {0.2f, 0.3f, 0.1f, 0.4f};
  expect_token(p, 0.6f, 0.0f, 3);
  expect_token(p, 0.6f, 0.5f, 3);  // r = 0.35
  expect_token(p, 0.6f, 0.6f, 1);  // r = 0.42
  expect_token(p, 0.6f, 0.999f, 1);
}

TEST(TopP, TiesKeepIdOrderAsGlibcStableQsort) {
  // All tie: order 0,1,2,3; topp 0.5 ends after 0.75 > 0.5 (id 2). r = coin * 0.75.
  const std::vector<float> p = {0.25f, 0.25f, 0.25f, 0.25f};
  expect_token(p, 0.5f, 0.0f, 0);
  expect_token(p, 0.5f, 0.5f, 1);  // r = 0.375
  expect_token(p, 0.5f, 0.9f, 2);  // r = 0.675
}

TEST(TopP, TieGroupBehindALargerProbability) {
  // cutoff 0.15 / 4 drops id 1 (0.0). Sorted: 4 (0.4), then the tie 0, 2, 3 (0.2 each) in
  // id order. topp 0.85: 0.4, 0.6, 0.8, 1.0 > 0.85 ends at id 3; r = coin * ~1.0.
  const std::vector<float> p = {0.2f, 0.0f, 0.2f, 0.2f, 0.4f};
  expect_token(p, 0.85f, 0.1f, 4);
  expect_token(p, 0.85f, 0.45f, 0);
  expect_token(p, 0.85f, 0.65f, 2);
  expect_token(p, 0.85f, 0.95f, 3);
}

TEST(TopP, CutoffKeepsProbabilitiesEqualToItAndDropsSmallerOnes) {
  // n = 5, topp 0.5: cutoff = 0.5 / 4 = 0.125 exactly. Id 0 holds the cutoff (kept, >=), id 1
  // the float just below (dropped). Sorted candidates: 2 (0.3), 4 (0.25), 3 (0.2), 0 (0.125);
  // 0.3 + 0.25 = 0.55 > 0.5 ends the nucleus at id 4, and r = coin * 0.55.
  const float below = std::nextafter(0.125f, 0.0f);
  std::vector<float> p = {0.125f, below, 0.3f, 0.2f, 0.25f};
  expect_token(p, 0.5f, 0.0f, 2);
  expect_token(p, 0.5f, 0.99f, 4);
  // topp 0.9 (cutoff 0.025) keeps id 1 and needs it: 0.875 + below is the first sum > 0.9.
  // One float either side of topp 0.5 moves the cutoff either side of ids 0 and 1.
  expect_same(p, {0.5f, 0.9f, 0.5f + 1e-7f, std::nextafter(0.5f, 0.0f)}, "cutoff boundary");
  // Only the cutoff value itself survives: it is the whole nucleus.
  const std::vector<float> q = {0.125f, below, below, below, below};
  expect_token(q, 0.5f, 0.7f, 0);
}

TEST(TopP, NoCandidateFallsBackToArgmax) {
  // Uniform over 4 with topp 0.1: cutoff 0.3 > 0.25 keeps nothing (run.c reads index -1).
  expect_token({0.25f, 0.25f, 0.25f, 0.25f}, 0.1f, 0.5f, 0);
  expect_token({0.2f, 0.3f, 0.25f, 0.25f}, 1e-45f, 0.5f, 1);
  // n = 1: cutoff = (1 - topp) / 0 = +inf; only +inf would be a candidate.
  expect_token({1.0f}, 0.9f, 0.3f, 0);
  expect_token({kInf}, 0.9f, 0.3f, 0);
  // NaN is never a candidate nor the argmax.
  expect_token({kNaN, 0.1f, 0.05f}, 0.2f, 0.5f, 1);
}

TEST(TopP, ToppOutsideTheOpenIntervalIsMultinomial) {
  const std::vector<float> p = {0.1f, 0.2f, 0.3f, 0.4f};
  ToppRunner run(4);
  for (float topp : {0.0f, -1.0f, 1.0f, 2.0f, kNaN})
    for (float coin : coins()) {
      EXPECT_EQ(run.fast(p, topp, coin), sample_mult(p.data(), 4, coin)) << topp;
      EXPECT_EQ(run.sorted(p, topp, coin), sample_mult(p.data(), 4, coin)) << topp;
    }
}

TEST(TopP, InfiniteProbabilitiesStayInRange) {
  // +inf sums to +inf; coin 0 makes r = 0 * inf = NaN and run.c returns the last kept token.
  const std::vector<float> p = {0.1f, kInf, 0.2f, kInf, kNaN, -1.0f};
  expect_same(p, kTopps, "infinities");
  expect_token(p, 0.5f, 0.0f, 1);  // nucleus {1}: inf > 0.5 at once
}

TEST(TopP, SameTokenAsTheFullSortOnSoftmaxDistributions) {
  std::mt19937 rng(99);
  for (int trial = 0; trial < 200; ++trial) {
    // Every 10th a vocabulary past kWideDigitKeys (the wide-digit sort), e.g. Llama 2's 32000.
    const int n = trial % 10 == 9 ? kWideDigitKeys + static_cast<int>(rng() % 20000) : 1 + static_cast<int>(rng() % 3000);
    std::vector<float> logits(static_cast<std::size_t>(n));
    switch (trial % 4) {
      case 0: {  // coarse values: many exact ties, flat to peaked
        const float spread = static_cast<float>(1 + rng() % 12);
        for (float& l : logits) l = static_cast<float>(rng() % 16) * spread / 4.0f;
        break;
      }
      case 1: {  // near-flat Gaussian (a random-weight model): most tokens in the nucleus
        std::normal_distribution<float> g(0.0f, 0.15f);
        for (float& l : logits) l = g(rng);
        break;
      }
      case 2: {  // peaked Gaussian
        std::normal_distribution<float> g(0.0f, 4.0f);
        for (float& l : logits) l = g(rng);
        break;
      }
      default: {  // one dominant token over a wide tail (probabilities down to denormals)
        std::uniform_real_distribution<float> u(-100.0f, 0.0f);
        for (float& l : logits) l = u(rng);
        logits[rng() % logits.size()] = 10.0f;
        break;
      }
    }
    expect_same(softmax_of(logits), kTopps, "softmax", 8);  // 8 coins: the oracle sorts per call
    if (HasFatalFailure()) return;
  }
}

TEST(TopP, SameTokenAsTheFullSortOnAdversarialArrays) {
  std::mt19937 rng(7);
  // Neighbouring floats: keys differing in the last bit only, in every order.
  std::vector<float> adjacent(1000);
  float v = 1e-3f;
  for (float& x : adjacent) x = v = std::nextafter(v, 1.0f);
  std::shuffle(adjacent.begin(), adjacent.end(), rng);
  expect_same(adjacent, kTopps, "adjacent floats");
  // Every probability equal (a single key): radix has nothing to sort.
  expect_same(std::vector<float>(777, 1.0f / 777.0f), kTopps, "all equal");
  // Keys over the widest range: +inf down to the smallest candidate (4 radix digits).
  std::vector<float> wide = {kInf, 1e-30f, 1.0f, 3e38f, 1e-7f, kInf, 0.5f};
  expect_same(wide, kTopps, "widest range");
  // Unnormalised, denormal, zero, negative and NaN entries mixed in.
  std::vector<float> mixed(2000);
  std::uniform_int_distribution<int> kind(0, 7);
  std::uniform_real_distribution<float> u(0.0f, 1e-3f);
  for (float& x : mixed) {
    switch (kind(rng)) {
      case 0: x = 1e-41f; break;
      case 1: x = 0.0f; break;
      case 2: x = -0.0f; break;
      case 3: x = -u(rng); break;
      case 4: x = kNaN; break;
      case 5: x = 1e-3f; break;  // a large tie group
      default: x = u(rng);
    }
  }
  expect_same(mixed, kTopps, "mixed");
  // Two values only, in long tie runs: the rank-in-tie lookup walks far.
  std::vector<float> two(5000);
  for (std::size_t i = 0; i < two.size(); ++i) two[i] = (rng() % 3 == 0) ? 3e-4f : 1e-4f;
  expect_same(two, kTopps, "two values");
}

TEST(TopP, OneCrowdedBucket) {
  // A vocabulary past kWideDigitKeys whose candidates all fall in one bucket of the top digit
  // (neighbouring floats, with one large value widening the key range): the walk sorts that
  // bucket with its inner radix sort, digits narrowed to its histogram slots.
  std::mt19937 rng(11);
  std::vector<float> p(kWideDigitKeys + 3000);
  float v = 2e-5f;
  for (float& x : p) x = v = std::nextafter(v, 1.0f);
  std::shuffle(p.begin(), p.end(), rng);
  p[123] = 0.5f;
  expect_same(p, kTopps, "crowded bucket");
}

TEST(TopP, TiesOnTheRunningSumsGrid) {
  // Just above 0.5, then odd multiples of 2^-25 and of 2^-24, mixed. While the sum is in
  // [0.5, 1) (grid steps of 2^-24) the first are a whole number of steps plus exactly half of
  // one, rounded up or down by the parity of the sum before them, which the second flip. Such
  // chunks cannot be added in any order; the walk must take them key by key.
  std::mt19937 rng(12);
  auto odd_halves = [&](int n, int lo, int hi) {
    std::vector<float> p(static_cast<std::size_t>(n));
    for (float& x : p) {
      const int odd = 2 * (lo + static_cast<int>(rng() % (hi - lo))) + 1;
      x = rng() % 2 ? std::ldexp(static_cast<float>(odd), -25) : std::ldexp(static_cast<float>(odd / 2 | 1), -24);
    }
    p[static_cast<std::size_t>(n / 3)] = std::nextafter(0.5f, 1.0f);
    return p;
  };
  expect_same(odd_halves(kWideDigitKeys + 777, 400, 1200), kTopps, "grid ties", 64);
  expect_same(odd_halves(3000, 4000, 8000), kTopps, "grid ties, small vocabulary", 64);
}

TEST(TopP, TinyVocabularies) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  for (int n = 1; n <= 6; ++n)
    for (int trial = 0; trial < 50; ++trial) {
      std::vector<float> logits(static_cast<std::size_t>(n));
      for (float& l : logits) l = std::floor(u(rng) * 4.0f);
      expect_same(softmax_of(logits), kTopps, "tiny");
      if (HasFatalFailure()) return;
    }
}

}  // namespace
}  // namespace pocketlm
