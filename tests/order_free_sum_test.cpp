// add_order_free against the plain left-to-right float loop it stands in for: summed in blocks
// (a block it refuses is added one by one), every input must give the loop's bits.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "pocketlm/base/order_free_sum.h"

namespace pocketlm {
namespace {

float plain_sum(const float* v, int n) {
  float s = 0.0f;
  for (int i = 0; i < n; ++i) s += v[i];
  return s;
}

// The sum as top-p's walk makes it: blocks added at once where add_order_free accepts them.
float ordered_sum(const float* v, int n) {
  constexpr int kBlock = 64;
  float s = 0.0f;
  int i = 0;
  for (; i + kBlock <= n; i += kBlock)
    if (!add_order_free(&s, v + i, kBlock))
      for (int j = i; j < i + kBlock; ++j) s += v[j];
  for (; i < n; ++i) s += v[i];
  return s;
}

std::uint32_t bits(float f) { return std::bit_cast<std::uint32_t>(f); }

// exp(x - max) of normal logits: what the softmax sums.
std::vector<float> softmax_terms(int n, float sigma, std::mt19937& rng) {
  std::normal_distribution<float> logit(0.0f, sigma);
  std::vector<float> v(static_cast<std::size_t>(n));
  for (float& x : v) x = logit(rng);
  if (v.empty()) return v;
  const float m = *std::max_element(v.begin(), v.end());
  for (float& x : v) x = std::exp(x - m);
  return v;
}

TEST(OrderFreeSum, SameBitsAsThePlainLoopOnSoftmaxTerms) {
  std::mt19937 rng(1);
  for (int n : {0, 1, 63, 64, 65, 512, 4097, 32000}) {
    for (float sigma : {0.01f, 0.5f, 2.0f, 8.0f, 40.0f}) {
      const std::vector<float> v = softmax_terms(n, sigma, rng);
      EXPECT_EQ(bits(ordered_sum(v.data(), n)), bits(plain_sum(v.data(), n))) << "n " << n << " sigma " << sigma;
    }
  }
}

TEST(OrderFreeSum, SameBitsOnValuesOfEveryMagnitude) {
  // Log-uniform magnitudes from subnormal to 2^40, with zeros: binades crossed often, values
  // larger than the sum, sums below the grid's 2^-103 floor.
  std::mt19937 rng(2);
  std::uniform_real_distribution<float> exponent(-149.0f, 40.0f);
  std::uniform_int_distribution<int> pick(0, 15);
  for (int round = 0; round < 200; ++round) {
    const int n = 1 + static_cast<int>(rng() % 3000);
    std::vector<float> v(static_cast<std::size_t>(n));
    const float spread = std::uniform_real_distribution<float>(0.0f, 60.0f)(rng);
    const float base = exponent(rng);
    for (float& x : v) {
      x = std::exp2(base + std::uniform_real_distribution<float>(0.0f, spread)(rng));
      if (pick(rng) == 0) x = 0.0f;
    }
    EXPECT_EQ(bits(ordered_sum(v.data(), n)), bits(plain_sum(v.data(), n))) << "round " << round;
  }
}

TEST(OrderFreeSum, TiesOnTheGridTakeThePlainLoop) {
  // 1 + 2^-24 is a tie between 1 and 1 + 2^-23: even goes down from 1, up from 1 + 2^-23, so
  // the same value adds 0 or 2 grid steps depending on the sum before it.
  std::vector<float> v(256, std::ldexp(1.0f, -24));
  v[0] = 1.0f;
  v[100] = std::ldexp(1.0f, -23);
  v[200] = std::ldexp(3.0f, -24);
  EXPECT_EQ(bits(ordered_sum(v.data(), 256)), bits(plain_sum(v.data(), 256)));
  float s = 1.0f;
  EXPECT_FALSE(add_order_free(&s, v.data() + 1, 10));
  EXPECT_EQ(s, 1.0f);  // untouched when refused
}

TEST(OrderFreeSum, NonFiniteAndNegativeValues) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  std::mt19937 rng(3);
  for (float odd : {kInf, -kInf, std::numeric_limits<float>::quiet_NaN(), -1.0f, -0.0f, -1e-30f, 3e38f}) {
    std::vector<float> v = softmax_terms(1000, 2.0f, rng);
    v[700] = odd;
    v[701] = odd;
    const float want = plain_sum(v.data(), 1000);
    const float got = ordered_sum(v.data(), 1000);
    if (std::isnan(want))
      EXPECT_TRUE(std::isnan(got)) << odd;
    else
      EXPECT_EQ(bits(got), bits(want)) << odd;
  }
}

TEST(OrderFreeSum, AcceptedBlocksGiveTheSumOfEveryOrder) {
  // When add_order_free accepts a block, any permutation of it added one by one gives its bits.
  std::mt19937 rng(4);
  int accepted = 0;
  for (int round = 0; round < 300; ++round) {
    std::vector<float> v = softmax_terms(96, 1.0f + static_cast<float>(round % 7), rng);
    for (float& x : v) x *= 1.0f / 4096.0f;
    const float start = std::ldexp(1.0f + static_cast<float>(rng() % 1000) / 1000.0f, -static_cast<int>(rng() % 6));
    float fast = start;
    const bool ok = add_order_free(&fast, v.data(), 96);
    if (!ok) {
      EXPECT_EQ(fast, start);
      continue;
    }
    ++accepted;
    for (int p = 0; p < 5; ++p) {
      std::shuffle(v.begin(), v.end(), rng);
      float slow = start;
      for (float x : v) slow += x;
      EXPECT_EQ(bits(fast), bits(slow)) << "round " << round;
    }
  }
  EXPECT_GT(accepted, 200);  // the grid path is the common one on such blocks
}

TEST(OrderFreeSum, KeysAsBitsAreTheSameValues) {
  std::mt19937 rng(5);
  const std::vector<float> v = softmax_terms(300, 1.0f, rng);
  std::vector<std::uint32_t> k(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) k[i] = bits(v[i]);
  float a = 0.5f, b = 0.5f;
  EXPECT_EQ(add_order_free(&a, v.data(), 300), add_order_free(&b, k.data(), 300));
  EXPECT_EQ(bits(a), bits(b));
}

}  // namespace
}  // namespace pocketlm
