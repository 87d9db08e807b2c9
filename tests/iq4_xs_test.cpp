// ggml's IQ4_XS on its own (quant/iq4_xs.h): the block layout against values worked out from
// the definition, the quantizer's known answers, round trips and error, the traits row, and
// the reference matmul against the float expression its docstring gives (kernels/reference.h).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "pocketlm/kernels/reference.h"
#include "pocketlm/quant/fp16.h"
#include "pocketlm/quant/iq4_xs.h"
#include "pocketlm/quant/q4_0.h"
#include "pocketlm/quant/q8_0.h"
#include "pocketlm/quant/tensor_type.h"

namespace pocketlm {
namespace {

constexpr int kGrid[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};

// A block with d, the 8 six-bit scales ls and nibbles nib[256], packed by the layout the
// header states (written out here, not through the library's helpers).
std::vector<unsigned char> make_block(std::uint16_t d, const int ls[8], const std::vector<int>& nib) {
  std::vector<unsigned char> b(kIQ4_XSBlockBytes, 0);
  store_fp16(b.data(), d);
  unsigned h = 0;
  for (int ib = 0; ib < 8; ++ib) {
    h |= static_cast<unsigned>(ls[ib] >> 4) << (2 * ib);
    b[4 + ib / 2] = static_cast<unsigned char>(b[4 + ib / 2] | (ls[ib] & 15) << (4 * (ib % 2)));
    for (int j = 0; j < 16; ++j)
      b[8 + 16 * ib + j] = static_cast<unsigned char>(nib[32 * ib + j] | nib[32 * ib + j + 16] << 4);
  }
  b[2] = static_cast<unsigned char>(h & 0xFF);
  b[3] = static_cast<unsigned char>(h >> 8);
  return b;
}

TEST(IQ4_XS, DequantizesAHandMadeBlock) {
  const int ls[8] = {0, 31, 32, 33, 63, 16, 47, 40};
  std::vector<int> nib(256);
  for (int i = 0; i < 256; ++i) nib[i] = (i * 7 + i / 32) % 16;
  const auto b = make_block(0x3800, ls, nib);  // d = 0.5
  EXPECT_EQ(b[2], 0xA4);  // scales_h: ls 0,31,32,33 -> high bits 0,1,2,2; 63,16,47,40 -> 3,1,2,2
  EXPECT_EQ(b[3], 0xA7);
  EXPECT_EQ(b[4], 0xF0);  // scales_l: (0, 15), (0, 1), (15, 0), (15, 8)
  std::vector<float> out(256);
  dequantize_iq4_xs(b.data(), 256, out.data());
  EXPECT_EQ(out[0], 2032.0f);      // 0.5 * (0 - 32) * -127
  EXPECT_EQ(out[32], 52.0f);       // 0.5 * (31 - 32) * -104: i = 32, nibble (224 + 1) % 16 = 1
  EXPECT_EQ(out[64 + 5], 0.0f);    // ls 32: every value 0
  EXPECT_EQ(out[128], -759.5f);    // 0.5 * (63 - 32) * -49: nibble (896 + 4) % 16 = 4
  for (int i = 0; i < 256; ++i)
    ASSERT_EQ(out[i], static_cast<float>(0.5 * (ls[i / 32] - 32) * kGrid[nib[i]])) << i;  // exact in double
  EXPECT_EQ(iq4_xs_scale(b.data(), 4), 63);
  EXPECT_EQ(iq4_xs_scale(b.data(), 7), 40);
}

TEST(IQ4_XS, QuantizerKnownAnswers) {
  // Every sub-block the grid in order times 0.25 * -32: d = 0.25, ls = 0, nibble = index.
  std::vector<float> x(256);
  for (int i = 0; i < 256; ++i) x[i] = 0.25f * -32.0f * static_cast<float>(kGrid[i % 16]);
  std::vector<unsigned char> b(kIQ4_XSBlockBytes);
  quantize_iq4_xs(x.data(), 256, b.data());
  EXPECT_EQ(load_fp16(b.data()), 0x3400);
  for (int i = 2; i < 8; ++i) EXPECT_EQ(b[i], 0) << i;
  for (int j = 0; j < 128; ++j) ASSERT_EQ(b[8 + j], (j % 16) | (j % 16) << 4) << j;
  // Zeros: d = 0, every ls 32 (multiplier 0: high bits 2 in scales_h), nibble 8 (grid value 1).
  std::vector<float> zeros(256, 0.0f);
  quantize_iq4_xs(zeros.data(), 256, b.data());
  EXPECT_EQ(load_fp16(b.data()), 0);
  EXPECT_EQ(b[2], 0xAA);
  EXPECT_EQ(b[3], 0xAA);
  for (int j = 0; j < 128; ++j) ASSERT_EQ(b[8 + j], 0x88) << j;
}

TEST(IQ4_XS, RepresentableBlocksRoundTripToTheirBytes) {
  std::mt19937 rng(23);
  std::uniform_int_distribution<int> nibble(0, 15), scale(1, 31), sign(0, 1), first(0, 7);
  std::uniform_real_distribution<float> mag(-10.0f, -3.0f);
  for (int trial = 0; trial < 200; ++trial) {
    int ls[8];
    const int big = first(rng);
    for (int ib = 0; ib < 8; ++ib) ls[ib] = ib == big ? 0 : 32 + (sign(rng) ? scale(rng) : -scale(rng));
    std::vector<int> nib(256);
    for (int i = 0; i < 256; ++i) nib[i] = nibble(rng);
    for (int ib = 0; ib < 8; ++ib) nib[32 * ib + 3] = 0;  // -127: each sub-block's largest value
    const auto b = make_block(fp32_to_fp16(std::pow(2.0f, mag(rng))), ls, nib);
    std::vector<float> x(256);
    dequantize_iq4_xs(b.data(), 256, x.data());
    std::vector<unsigned char> again(kIQ4_XSBlockBytes);
    quantize_iq4_xs(x.data(), 256, again.data());
    ASSERT_EQ(again, b) << "trial " << trial;
  }
}

// 4.25 bits with a non-linear grid and 6-bit sub-scales: no worse than Q4_0's 4.5 bits on
// Gaussian weights (allowed 1.3x), and far better than a bad quantizer would be.
TEST(IQ4_XS, ErrorIsWithinQ4_0s) {
  std::mt19937 rng(5);
  std::normal_distribution<float> dist(0.0f, 0.02f);
  std::vector<float> x(256 * 64);
  for (float& v : x) v = dist(rng);
  x[1000] = 0.3f;  // an outlier
  std::vector<unsigned char> iq(64 * kIQ4_XSBlockBytes), q4(x.size() / 32 * kQ4_0BlockBytes);
  quantize_iq4_xs(x.data(), x.size(), iq.data());
  quantize_q4_0(x.data(), x.size(), q4.data());
  std::vector<float> a(x.size()), b(x.size());
  dequantize_iq4_xs(iq.data(), x.size(), a.data());
  dequantize_q4_0(q4.data(), x.size(), b.data());
  double ex = 0, ea = 0, eb = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    ex += static_cast<double>(x[i]) * x[i];
    ea += (static_cast<double>(a[i]) - x[i]) * (static_cast<double>(a[i]) - x[i]);
    eb += (static_cast<double>(b[i]) - x[i]) * (static_cast<double>(b[i]) - x[i]);
  }
  const double rel_iq = std::sqrt(ea / ex), rel_q4 = std::sqrt(eb / ex);
  EXPECT_LE(rel_iq, 1.3 * rel_q4) << "iq4_xs " << rel_iq << " q4_0 " << rel_q4;
  EXPECT_LT(rel_iq, 0.12) << rel_iq;
}

TEST(IQ4_XS, TraitsRow) {
  std::uint64_t values = 0, scales = 0;
  ASSERT_TRUE(type_bytes(TensorType::kIQ4_XS, 768, 0, &values, &scales));
  EXPECT_EQ(values, 408u);  // a PLE table row of the ESP32 shape: 3 super-blocks
  EXPECT_EQ(scales, 0u);
  EXPECT_EQ(row_value_bytes(TensorType::kIQ4_XS, 512, 0), 272u);
  EXPECT_FALSE(type_bytes(TensorType::kIQ4_XS, 288, 0, &values, &scales));  // not whole super-blocks
  EXPECT_STREQ(type_name(TensorType::kIQ4_XS), "iq4_xs");
  EXPECT_EQ(type_traits(TensorType::kIQ4_XS).activation, TensorType::kQ8_0);
  std::vector<unsigned char> blk(2 * kIQ4_XSBlockBytes, 0x11);
  store_fp16(blk.data(), 0x3C00);
  store_fp16(blk.data() + kIQ4_XSBlockBytes, 0x7E00);  // NaN d of super-block 1
  NonFinite found{};
  ASSERT_TRUE(find_non_finite(TensorType::kIQ4_XS, blk.data(), nullptr, 1, 512, 0, &found));
  EXPECT_TRUE(found.in_scales);
  EXPECT_EQ(found.element, 256u);
}

// reference::matmul_iq4_xs against its docstring's expression, computed here from the bytes.
TEST(IQ4_XS, ReferenceMatmulIsTheDocumentedExpression) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> byte(0, 255);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  const int d = 5, n = 768;
  std::vector<unsigned char> w(static_cast<std::size_t>(d) * 3 * kIQ4_XSBlockBytes);
  for (std::size_t b = 0; b < w.size() / kIQ4_XSBlockBytes; ++b) {
    unsigned char* blk = w.data() + b * kIQ4_XSBlockBytes;
    for (std::size_t i = 2; i < kIQ4_XSBlockBytes; ++i) blk[i] = static_cast<unsigned char>(byte(rng));
    store_fp16(blk, fp32_to_fp16(0.001f * static_cast<float>(1 + byte(rng))));
  }
  std::vector<float> x(n);
  for (float& v : x) v = dist(rng);
  std::vector<unsigned char> xq(n / 32 * kQ8_0BlockBytes);
  quantize_q8_0(x.data(), n, xq.data());
  std::vector<float> got(d);
  reference::matmul_iq4_xs(got.data(), Matrix{TensorType::kIQ4_XS, d, n, w.data(), nullptr, 0, 1},
                           Activation{xq.data(), nullptr, n, 32}, d);
  for (int r = 0; r < d; ++r) {
    float acc = 0.0f;
    for (int s = 0; s < n / 256; ++s) {
      const unsigned char* blk = w.data() + (static_cast<std::size_t>(r) * 3 + s) * kIQ4_XSBlockBytes;
      const float d_w = fp16_to_fp32(load_fp16(blk));
      const unsigned h = blk[2] | blk[3] << 8;
      for (int ib = 0; ib < 8; ++ib) {
        const int ls = ((blk[4 + ib / 2] >> (4 * (ib % 2))) & 15) | ((h >> (2 * ib)) & 3) << 4;
        const unsigned char* xb = xq.data() + static_cast<std::size_t>(s * 8 + ib) * kQ8_0BlockBytes;
        int isum = 0;
        for (int i = 0; i < 32; ++i) {
          const int q = i < 16 ? blk[8 + 16 * ib + i] & 15 : blk[8 + 16 * ib + i - 16] >> 4;
          isum += kGrid[q] * static_cast<std::int8_t>(xb[2 + i]);
        }
        const float dl = d_w * static_cast<float>(ls - 32);
        const float d_x = fp16_to_fp32(load_fp16(xb));
        acc = acc + static_cast<float>(isum) * (dl * d_x);
      }
    }
    std::uint32_t a, b;
    std::memcpy(&a, &acc, 4);
    std::memcpy(&b, &got[static_cast<std::size_t>(r)], 4);
    EXPECT_EQ(a, b) << "row " << r << ": " << acc << " vs " << got[static_cast<std::size_t>(r)];
  }
}

}  // namespace
}  // namespace pocketlm
