// Every backend must produce the same bits as `reference` for every kernel, on random data
// and on ragged shapes: rows not a multiple of the lane count, dims not a multiple of 4/8/32.
#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "pocketlm/kernels/kernels.h"
#include "pocketlm/kernels/q80_interleave.h"
#include "pocketlm/kernels/row_interleave.h"

namespace pocketlm {
namespace {

std::vector<const Kernels*> backends() {
  std::vector<const Kernels*> out;
  for (const char* const* name = kernel_names(); *name; ++name)
    if (const Kernels* k = find_kernels(*name)) out.push_back(k);
  return out;
}

std::vector<float> random_floats(std::size_t n, std::mt19937& rng, float scale = 1.0f) {
  std::uniform_real_distribution<float> dist(-scale, scale);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

std::vector<std::int8_t> random_int8(std::size_t n, std::mt19937& rng) {
  std::uniform_int_distribution<int> dist(-128, 127);  // weights may hold -128
  std::vector<std::int8_t> v(n);
  for (auto& x : v) x = static_cast<std::int8_t>(dist(rng));
  return v;
}

// Bitwise equality, with the first differing index in the message.
void expect_same_bits(const std::vector<float>& a, const std::vector<float>& b, const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::memcmp(&a[i], &b[i], sizeof(float)) != 0) {
      ADD_FAILURE() << what << ": element " << i << " is " << b[i] << ", reference " << a[i];
      return;
    }
  }
}

// The weights as backend k stores them.
std::vector<float> pack(const std::vector<float>& w, int n, int d, int il) {
  std::vector<float> packed(w.size());
  for (int r = 0; r < d; ++r)
    for (int j = 0; j < n; ++j)
      packed[interleaved_index(static_cast<std::size_t>(r), static_cast<std::size_t>(j), static_cast<std::size_t>(n),
                               static_cast<std::size_t>(d), static_cast<std::size_t>(il))] =
          w[static_cast<std::size_t>(r) * n + j];
  return packed;
}

class KernelEquivalence : public ::testing::TestWithParam<const Kernels*> {
 protected:
  const Kernels& ref_ = reference_kernels();
  const Kernels& k_ = *GetParam();
  std::mt19937 rng_{12345};
};

TEST_P(KernelEquivalence, MatmulF32) {
  const int shapes[][2] = {{1, 1}, {7, 3}, {8, 8}, {9, 17}, {31, 5}, {33, 64}, {40, 1}, {288, 288}, {770, 289},
                           {64, 172}, {172, 64}};
  for (auto [d, n] : shapes) {
    const auto w = random_floats(static_cast<std::size_t>(d) * n, rng_);
    const auto x = random_floats(static_cast<std::size_t>(n), rng_, 3.0f);
    std::vector<float> want(static_cast<std::size_t>(d)), got(static_cast<std::size_t>(d));
    ref_.matmul_f32(want.data(), x.data(), w.data(), n, d);
    const auto packed = pack(w, n, d, k_.f32_interleave);
    k_.matmul_f32(got.data(), x.data(), packed.data(), n, d);
    expect_same_bits(want, got, "matmul_f32 d=" + std::to_string(d) + " n=" + std::to_string(n));
  }
}

TEST_P(KernelEquivalence, MatmulQ80) {
  const int shapes[][3] = {{1, 32, 32}, {7, 64, 32}, {8, 32, 16}, {9, 48, 16}, {17, 96, 32}, {33, 128, 64},
                           {37, 12, 4},  {288, 288, 32}, {5, 172, 4}, {64, 172, 4}, {300, 768, 32}, {13, 6, 2},
                           {11, 96, 48}, {41, 288, 96}, {16, 64, 64}};
  for (auto [d, n, gs] : shapes) {
    const auto wq = random_int8(static_cast<std::size_t>(d) * n, rng_);
    const auto ws = random_floats(static_cast<std::size_t>(d) * n / gs, rng_, 0.02f);
    const auto x = random_floats(static_cast<std::size_t>(n), rng_, 4.0f);
    std::vector<std::int8_t> xq(static_cast<std::size_t>(n));
    std::vector<float> xs(static_cast<std::size_t>(n / gs));
    ref_.quantize_q80(x.data(), n, gs, xq.data(), xs.data());
    std::vector<std::int8_t> xq2(xq.size());
    std::vector<float> xs2(xs.size());
    k_.quantize_q80(x.data(), n, gs, xq2.data(), xs2.data());
    EXPECT_EQ(xq, xq2);
    expect_same_bits(xs, xs2, "quantize_q80 scales");
    std::vector<float> want(static_cast<std::size_t>(d)), got(static_cast<std::size_t>(d));
    ref_.matmul_q80(want.data(), xq.data(), xs.data(), wq.data(), ws.data(), n, d, gs);
    // The weights as this backend stores them (interleaved blocks, row-major tail).
    const int il = q80_interleave_of(k_, gs);
    auto pq = wq;
    auto ps = ws;
    for (int r = 0; r + il <= d && il > 1; r += il)
      interleave_q80_block(pq.data() + static_cast<std::size_t>(r) * n, ps.data() + static_cast<std::size_t>(r) * n / gs,
                           wq.data() + static_cast<std::size_t>(r) * n, ws.data() + static_cast<std::size_t>(r) * n / gs,
                           static_cast<std::size_t>(n), static_cast<std::size_t>(gs), static_cast<std::size_t>(il));
    k_.matmul_q80(got.data(), xq.data(), xs.data(), pq.data(), ps.data(), n, d, gs);
    expect_same_bits(want, got,
                     "matmul_q80 d=" + std::to_string(d) + " n=" + std::to_string(n) + " gs=" + std::to_string(gs));
  }
}

TEST_P(KernelEquivalence, QuantizeHandlesAllZeroGroups) {
  std::vector<float> x(64, 0.0f);
  x[40] = 2.5f;
  std::vector<std::int8_t> q(64, 99);
  std::vector<float> s(2, -1.0f);
  k_.quantize_q80(x.data(), 64, 32, q.data(), s.data());
  EXPECT_EQ(s[0], 0.0f);
  for (int i = 0; i < 32; ++i) EXPECT_EQ(q[static_cast<std::size_t>(i)], 0);
  EXPECT_EQ(q[40], 127);
}

// Found by fuzz/fuzz_checkpoint: hostile weights give NaN activations, and casting NaN (or a
// value past ±127, which a subnormal scale allows) to int8 is undefined behaviour. NaN
// quantizes to 0 (what runq.c yields on x86) and values are clamped to [-127, 127].
TEST_P(KernelEquivalence, QuantizeMapsNanToZeroAndClamps) {
  const float tiny = std::numeric_limits<float>::denorm_min();
  std::vector<float> x(64, 0.0f);
  x[0] = std::numeric_limits<float>::quiet_NaN();
  x[1] = 1.0f;
  x[2] = -1.0f;
  x[32] = 190 * tiny;  // scale = 190/127 tiny, which rounds to 1 tiny: x / scale = 190
  x[33] = -190 * tiny;
  x[34] = std::numeric_limits<float>::quiet_NaN();
  std::vector<std::int8_t> q(64, 99);
  std::vector<float> s(2, -1.0f);
  k_.quantize_q80(x.data(), 64, 32, q.data(), s.data());
  EXPECT_EQ(q[0], 0);
  EXPECT_EQ(q[1], 127);
  EXPECT_EQ(q[2], -127);
  EXPECT_EQ(q[32], 127);
  EXPECT_EQ(q[33], -127);
  EXPECT_EQ(q[34], 0);
  for (std::int8_t v : q) EXPECT_GE(v, -127);
}

TEST_P(KernelEquivalence, ElementwiseKernels) {
  for (int n : {1, 7, 8, 33, 64, 172, 288, 32000}) {
    const auto x = random_floats(static_cast<std::size_t>(n), rng_, 5.0f);
    const auto w = random_floats(static_cast<std::size_t>(n), rng_);
    std::vector<float> want(x.size()), got(x.size());
    ref_.rmsnorm(want.data(), x.data(), w.data(), n);
    k_.rmsnorm(got.data(), x.data(), w.data(), n);
    expect_same_bits(want, got, "rmsnorm n=" + std::to_string(n));

    want = x;
    got = x;
    ref_.softmax(want.data(), n);
    k_.softmax(got.data(), n);
    expect_same_bits(want, got, "softmax n=" + std::to_string(n));

    want = x;
    got = x;
    ref_.swiglu(want.data(), w.data(), n);
    k_.swiglu(got.data(), w.data(), n);
    expect_same_bits(want, got, "swiglu n=" + std::to_string(n));
  }
}

TEST_P(KernelEquivalence, Attention) {
  // n_heads, n_kv_heads, head_size, seq_len
  const int shapes[][4] = {{8, 4, 8, 16}, {6, 6, 48, 40}, {4, 1, 6, 9}, {3, 3, 10, 33}};
  for (auto [n_heads, n_kv_heads, head_size, seq_len] : shapes) {
    const int kv_dim = n_kv_heads * head_size;
    const auto kc = random_floats(static_cast<std::size_t>(seq_len) * kv_dim, rng_);
    const auto vc = random_floats(static_cast<std::size_t>(seq_len) * kv_dim, rng_);
    const auto q = random_floats(static_cast<std::size_t>(n_heads) * head_size, rng_, 2.0f);
    for (int pos : {0, 1, 8, seq_len - 1}) {
      std::vector<float> out1(q.size()), out2(q.size());
      std::vector<float> att1(static_cast<std::size_t>(n_heads) * seq_len), att2(att1.size());
      ref_.attention({out1.data(), att1.data(), q.data(), kc.data(), vc.data(), pos, n_heads, n_kv_heads, head_size,
                      kv_dim, seq_len});
      k_.attention({out2.data(), att2.data(), q.data(), kc.data(), vc.data(), pos, n_heads, n_kv_heads, head_size,
                    kv_dim, seq_len});
      expect_same_bits(out1, out2, "attention pos=" + std::to_string(pos) + " head_size=" + std::to_string(head_size));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, KernelEquivalence, ::testing::ValuesIn(backends()),
                         [](const auto& info) { return std::string(info.param->name); });

}  // namespace
}  // namespace pocketlm
