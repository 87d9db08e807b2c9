// Kernels::compact_at_least (top-p's candidate filter) on every backend: the same kept bits in
// the same order as a plain loop, for every length, alignment and kind of float.
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernel_test_support.h"
#include "pocketlm/kernels/kernels.h"

namespace pocketlm {
namespace {

class CompactKernel : public ::testing::TestWithParam<const Kernels*> {
 protected:
  const Kernels& k_ = *GetParam();

  // The kept values' bits by the definition, and the kernel's, compared.
  void expect_compacts(const float* x, int n, float threshold) {
    std::vector<std::uint32_t> want;
    for (int i = 0; i < n; ++i)
      if (x[i] >= threshold) want.push_back(std::bit_cast<std::uint32_t>(x[i]));
    std::vector<std::uint32_t> got(static_cast<std::size_t>(n) + 1, 0xdeadbeefu);
    const int count = k_.compact_at_least(x, n, threshold, got.data());
    ASSERT_EQ(count, static_cast<int>(want.size())) << "n " << n << " threshold " << threshold;
    for (int i = 0; i < count; ++i) ASSERT_EQ(got[static_cast<std::size_t>(i)], want[static_cast<std::size_t>(i)]) << i;
    EXPECT_EQ(got[static_cast<std::size_t>(n)], 0xdeadbeefu) << "wrote past n";
  }
};

TEST_P(CompactKernel, HasTheSlot) { ASSERT_NE(k_.compact_at_least, nullptr); }

TEST_P(CompactKernel, EveryLengthAndAlignment) {
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  std::vector<float> buffer(80);
  for (float& x : buffer) x = u(rng);
  for (int offset = 0; offset < 8; ++offset)
    for (int n = 0; n + offset <= 72; ++n)
      for (float threshold : {0.0f, 0.3f, 0.9f, 2.0f}) {
        expect_compacts(buffer.data() + offset, n, threshold);
        if (HasFatalFailure()) return;
      }
}

TEST_P(CompactKernel, SpecialValuesAndAVocabulary) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  const float special[] = {std::numeric_limits<float>::quiet_NaN(), -std::numeric_limits<float>::quiet_NaN(), kInf,
                           -kInf, 0.0f, -0.0f, 1e-45f, -1e-45f, 1e-38f, 3e38f, 1.0f, -1.0f};
  std::mt19937 rng(2);
  std::vector<float> x(32003);
  for (float& v : x) v = rng() % 3 ? std::ldexp(static_cast<float>(rng() % 1000) / 1000.0f, -static_cast<int>(rng() % 30)) : special[rng() % 12];
  for (float threshold : {3.1e-6f, 0.0f, -0.0f, 1e-45f, 0.5f, kInf, -kInf}) {
    expect_compacts(x.data(), static_cast<int>(x.size()), threshold);
    if (HasFatalFailure()) return;
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, CompactKernel, ::testing::ValuesIn(test::available_backends()),
                         [](const auto& info) { return test::backend_test_name(info.param); });

}  // namespace
}  // namespace pocketlm
