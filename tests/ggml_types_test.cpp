// The GGUF tensor types on their own: fp16 conversion (every half, and rounding of floats to
// halves), ggml's Q8_0 and Q4_0 block layouts and quantization rules, and their traits rows.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "pocketlm/quant/fp16.h"
#include "pocketlm/quant/q4_0.h"
#include "pocketlm/quant/q8_0.h"
#include "pocketlm/quant/tensor_type.h"

namespace pocketlm {
namespace {

// The value of a half by its definition, in double arithmetic.
double half_value(std::uint16_t h) {
  const int sign = h & 0x8000 ? -1 : 1, exp = (h >> 10) & 0x1F, man = h & 0x3FF;
  if (exp == 0) return sign * std::ldexp(man, -24);
  if (exp == 31) return man ? std::numeric_limits<double>::quiet_NaN() : sign * std::numeric_limits<double>::infinity();
  return sign * std::ldexp(1024 + man, exp - 25);
}

TEST(Fp16, EveryHalfConvertsExactly) {
  for (std::uint32_t h = 0; h < 65536; ++h) {
    const float f = fp16_to_fp32(static_cast<std::uint16_t>(h));
    const double want = half_value(static_cast<std::uint16_t>(h));
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(f)) << h;
      continue;
    }
    ASSERT_EQ(static_cast<double>(f), want) << "half 0x" << std::hex << h;
    if (want == 0) EXPECT_EQ(std::signbit(f), (h & 0x8000) != 0);
    // and back
    ASSERT_EQ(fp32_to_fp16(f), h) << "half 0x" << std::hex << h;
  }
}

TEST(Fp16, FloatsRoundToNearestEven) {
  // Between two neighbouring halves: below the midpoint, the midpoint (ties to even), above it.
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> pick(0, 0x7BFE);  // finite positive halves with a finite successor
  for (int i = 0; i < 20000; ++i) {
    const auto h = static_cast<std::uint16_t>(pick(rng));
    const double a = half_value(h), b = half_value(static_cast<std::uint16_t>(h + 1));
    const double mid = (a + b) / 2;
    const auto f_mid = static_cast<float>(mid);  // exact: a float has more precision than a half
    ASSERT_EQ(static_cast<double>(f_mid), mid);
    EXPECT_EQ(fp32_to_fp16(f_mid), (h & 1) ? h + 1 : h) << h;
    EXPECT_EQ(fp32_to_fp16(std::nextafter(f_mid, 0.0f)), h) << h;
    EXPECT_EQ(fp32_to_fp16(std::nextafter(f_mid, 1e9f)), h + 1) << h;
    EXPECT_EQ(fp32_to_fp16(-f_mid), 0x8000 | ((h & 1) ? h + 1 : h)) << h;
  }
  EXPECT_EQ(fp32_to_fp16(65504.0f), 0x7BFF);
  EXPECT_EQ(fp32_to_fp16(65519.99f), 0x7BFF);
  EXPECT_EQ(fp32_to_fp16(65520.0f), 0x7C00);  // the tie rounds to even: infinity
  EXPECT_EQ(fp32_to_fp16(std::numeric_limits<float>::infinity()), 0x7C00);
  EXPECT_EQ(fp32_to_fp16(std::ldexp(1.0f, -25)), 0x0000);                      // tie with 0: even
  EXPECT_EQ(fp32_to_fp16(std::nextafter(std::ldexp(1.0f, -25), 1.0f)), 0x0001);
  EXPECT_EQ(fp32_to_fp16(1e-30f), 0x0000);
  EXPECT_EQ(fp32_to_fp16(std::numeric_limits<float>::quiet_NaN()) & 0x7E00, 0x7E00);
}

TEST(GgmlBlocks, Q8_0LayoutAndRule) {
  std::vector<float> x(32);
  for (int i = 0; i < 32; ++i) x[static_cast<std::size_t>(i)] = static_cast<float>(i - 16) * 0.25f;  // max |x| = 4
  unsigned char blk[kQ8_0BlockBytes];
  quantize_q8_0(x.data(), 32, blk);
  EXPECT_EQ(load_fp16(blk), fp32_to_fp16(4.0f / 127.0f));
  const auto* q = reinterpret_cast<const std::int8_t*>(blk + 2);
  EXPECT_EQ(q[0], -127);  // -4
  EXPECT_EQ(q[16], 0);
  EXPECT_EQ(q[17], static_cast<std::int8_t>(std::round(0.25f * (1.0f / (4.0f / 127.0f)))));
  std::vector<float> back(32);
  dequantize_q8_0(blk, 32, back.data());
  const float d = fp16_to_fp32(load_fp16(blk));
  for (int i = 0; i < 32; ++i) EXPECT_EQ(back[static_cast<std::size_t>(i)], q[i] * d);
  for (int i = 0; i < 32; ++i) EXPECT_NEAR(back[static_cast<std::size_t>(i)], x[static_cast<std::size_t>(i)], d);
}

TEST(GgmlBlocks, Q4_0LowNibblesAreTheFirst16Weights) {
  std::vector<float> x(32, 0.0f);
  x[0] = -8.0f;   // the extreme value: d = -8 / -8 = 1, q = -8 -> nibble 0
  x[1] = 7.0f;    // nibble 15
  x[16] = 3.0f;   // high nibble of byte 0: 3 + 8 = 11
  x[31] = -1.0f;  // high nibble of byte 15: 7
  unsigned char blk[kQ4_0BlockBytes];
  quantize_q4_0(x.data(), 32, blk);
  EXPECT_EQ(fp16_to_fp32(load_fp16(blk)), 1.0f);
  EXPECT_EQ(blk[2 + 0], 0x00 | (11 << 4));
  EXPECT_EQ(blk[2 + 1], 15 | (8 << 4));
  EXPECT_EQ(blk[2 + 15], 8 | (7 << 4));
  std::vector<float> back(32);
  dequantize_q4_0(blk, 32, back.data());
  for (int i = 0; i < 32; ++i) EXPECT_EQ(back[static_cast<std::size_t>(i)], x[static_cast<std::size_t>(i)]) << i;
}

// Within half a step, except on the side opposite the extreme value, where q stops at 7 and
// the error can reach one step (plus the fp16 rounding of d).
TEST(GgmlBlocks, Q4_0ErrorIsWithinOneStep) {
  std::mt19937 rng(3);
  std::normal_distribution<float> dist(0.0f, 0.02f);
  std::vector<float> x(32 * 64);
  for (float& v : x) v = dist(rng);
  std::vector<unsigned char> blocks(64 * kQ4_0BlockBytes);
  quantize_q4_0(x.data(), x.size(), blocks.data());
  std::vector<float> back(x.size());
  dequantize_q4_0(blocks.data(), x.size(), back.data());
  for (std::size_t b = 0; b < 64; ++b) {
    const float d = std::fabs(fp16_to_fp32(load_fp16(blocks.data() + b * kQ4_0BlockBytes)));
    for (std::size_t i = 0; i < 32; ++i) {
      const float err = std::fabs(back[b * 32 + i] - x[b * 32 + i]);
      const bool clipped = std::fabs(x[b * 32 + i]) > 7.5f * d;
      EXPECT_LE(err, (clipped ? 1.0f : 0.5f) * d + 8 * d / 2048) << b << " " << i;
    }
  }
  // NaN weights quantize to a defined nibble instead of an undefined cast.
  x[0] = std::numeric_limits<float>::quiet_NaN();
  quantize_q4_0(x.data(), 32, blocks.data());
}

TEST(GgmlBlocks, TraitsRows) {
  std::uint64_t values = 0, scales = 0;
  ASSERT_TRUE(type_bytes(TensorType::kQ8_0, 64, 0, &values, &scales));
  EXPECT_EQ(values, 68u);
  EXPECT_EQ(scales, 0u);
  ASSERT_TRUE(type_bytes(TensorType::kQ4_0, 64, 0, &values, &scales));
  EXPECT_EQ(values, 36u);
  ASSERT_TRUE(type_bytes(TensorType::kF16, 3, 0, &values, &scales));
  EXPECT_EQ(values, 6u);
  EXPECT_FALSE(type_bytes(TensorType::kQ4_0, 48, 0, &values, &scales));  // not whole blocks
  EXPECT_STREQ(type_name(TensorType::kQ4_0), "q4_0");
  EXPECT_EQ(type_traits(TensorType::kQ4_0).activation, TensorType::kQ8_0);
  EXPECT_EQ(type_traits(TensorType::kF16).activation, TensorType::kF32);
  // Non-finite fp16 scales and values are found like f32 ones.
  std::vector<unsigned char> blk(2 * kQ4_0BlockBytes, 0x11);
  store_fp16(blk.data(), 0x3C00);
  store_fp16(blk.data() + kQ4_0BlockBytes, 0xFC00);  // -inf scale of block 1
  NonFinite found{};
  ASSERT_TRUE(find_non_finite(TensorType::kQ4_0, blk.data(), nullptr, 1, 64, 0, &found));
  EXPECT_TRUE(found.in_scales);
  EXPECT_EQ(found.element, 32u);
  EXPECT_TRUE(std::isinf(found.value));
  std::vector<std::uint16_t> h = {0x3C00, 0x7E00};
  ASSERT_TRUE(find_non_finite(TensorType::kF16, h.data(), nullptr, 1, 2, 0, &found));
  EXPECT_EQ(found.element, 1u);
  EXPECT_FALSE(found.in_scales);
}

}  // namespace
}  // namespace pocketlm
