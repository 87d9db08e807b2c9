// Every backend must produce the same bits as `reference` for every kernel, on random data
// and on ragged shapes: rows not a multiple of the lane count, dims not a multiple of 4/8/32.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <iterator>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "pocketlm/kernels/kernels.h"
#include "pocketlm/kernels/reference.h"
#include "pocketlm/quant/fp16.h"
#include "pocketlm/quant/iq4_xs.h"
#include "pocketlm/quant/q4_0.h"
#include "pocketlm/quant/q8_0.h"
#include "pocketlm/quant/q80_interleave.h"
#include "pocketlm/quant/row_interleave.h"
#include "kernel_test_support.h"

namespace pocketlm {
namespace {

using test::random_floats;
using test::pack_blocks;
using test::random_blocks;
using test::random_int8;

std::vector<const Kernels*> backends() { return test::available_backends(); }



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

// The table's entries, called the way the forward pass calls them.
void quantize_q80(const Kernels& k, const float* x, int n, int gs, std::int8_t* q, float* s) {
  k.quantize_act[type_index(TensorType::kQ80)](x, n, gs, q, s);
}
void matmul_f32(const Kernels& k, float* out, const float* x, const float* w, int n, int d, int il) {
  const Matrix m{TensorType::kF32, d, n, w, nullptr, 0, il};
  k.matmul[type_index(TensorType::kF32)](out, m, Activation{x, nullptr, n, 0}, d);
}
void matmul_q80(const Kernels& k, float* out, const std::int8_t* xq, const float* xs, const std::int8_t* wq,
                const float* ws, int n, int d, int gs, int il) {
  const Matrix m{TensorType::kQ80, d, n, wq, ws, gs, il};
  k.matmul[type_index(TensorType::kQ80)](out, m, Activation{xq, xs, n, gs}, d);
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
    matmul_f32(ref_, want.data(), x.data(), w.data(), n, d, 1);
    const int il = interleave_of(k_, TensorType::kF32, 0);
    const auto packed = pack(w, n, d, il);
    matmul_f32(k_, got.data(), x.data(), packed.data(), n, d, il);
    expect_same_bits(want, got, "matmul_f32 d=" + std::to_string(d) + " n=" + std::to_string(n));
  }
}

TEST_P(KernelEquivalence, MatmulQ80) {
  const int shapes[][3] = {{1, 32, 32}, {7, 64, 32}, {8, 32, 16}, {9, 48, 16}, {17, 96, 32}, {33, 128, 64},
                           {37, 12, 4},  {288, 288, 32}, {5, 172, 4}, {64, 172, 4}, {300, 768, 32}, {13, 6, 2},
                           {11, 96, 48}, {41, 288, 96}, {16, 64, 64}, {200, 2112, 32}, {150, 24, 12}};
  for (auto [d, n, gs] : shapes) {
    const auto wq = random_int8(static_cast<std::size_t>(d) * n, rng_);
    const auto ws = random_floats(static_cast<std::size_t>(d) * n / gs, rng_, 0.02f);
    const auto x = random_floats(static_cast<std::size_t>(n), rng_, 4.0f);
    std::vector<std::int8_t> xq(static_cast<std::size_t>(n));
    std::vector<float> xs(static_cast<std::size_t>(n / gs));
    quantize_q80(ref_, x.data(), n, gs, xq.data(), xs.data());
    std::vector<std::int8_t> xq2(xq.size());
    std::vector<float> xs2(xs.size());
    quantize_q80(k_, x.data(), n, gs, xq2.data(), xs2.data());
    EXPECT_EQ(xq, xq2);
    expect_same_bits(xs, xs2, "quantize_q80 scales");
    std::vector<float> want(static_cast<std::size_t>(d)), got(static_cast<std::size_t>(d));
    matmul_q80(ref_, want.data(), xq.data(), xs.data(), wq.data(), ws.data(), n, d, gs, 1);
    // The weights as this backend stores them (interleaved blocks, row-major tail).
    std::vector<std::int8_t> pq;
    std::vector<float> ps;
    const int il = test::interleave_q80_for(k_, wq, ws, d, n, gs, &pq, &ps);
    matmul_q80(k_, got.data(), xq.data(), xs.data(), pq.data(), ps.data(), n, d, gs, il);
    const std::string shape = "d=" + std::to_string(d) + " n=" + std::to_string(n) + " gs=" + std::to_string(gs);
    expect_same_bits(want, got, "matmul_q80 " + shape);
    // Each row read back from this layout (a shared classifier's embedding lookups) is the
    // row-major row's dequantization.
    const Matrix row_major{TensorType::kQ80, d, n, wq.data(), ws.data(), gs, 1};
    const Matrix stored{TensorType::kQ80, d, n, pq.data(), ps.data(), gs, il};
    std::vector<float> want_row(static_cast<std::size_t>(n)), got_row(want_row.size());
    for (int r = 0; r < d; ++r) {
      dequantize_matrix_row(row_major, r, want_row.data());
      dequantize_matrix_row(stored, r, got_row.data());
      expect_same_bits(want_row, got_row, "q80 row " + std::to_string(r) + " of " + shape);
    }
  }
}

TEST_P(KernelEquivalence, QuantizeHandlesAllZeroGroups) {
  std::vector<float> x(64, 0.0f);
  x[40] = 2.5f;
  std::vector<std::int8_t> q(64, 99);
  std::vector<float> s(2, -1.0f);
  quantize_q80(k_, x.data(), 64, 32, q.data(), s.data());
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
  quantize_q80(k_, x.data(), 64, 32, q.data(), s.data());
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
    ref_.rmsnorm(want.data(), x.data(), w.data(), n, 1e-5f);
    k_.rmsnorm(got.data(), x.data(), w.data(), n, 1e-5f);
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
  // n_heads, n_kv_heads, head_size, seq_len; a head past avx2's 256 zero keys of a partial tile
  const int shapes[][4] = {{8, 4, 8, 16}, {6, 6, 48, 40}, {4, 1, 6, 9}, {3, 3, 10, 33}, {2, 1, 268, 13}};
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

// Only the backends that have a batched attention kernel (reference and tiled4 run attention
// once per token in prefill too, so there is nothing to compare).
class BatchedAttention : public KernelEquivalence {};
std::vector<const Kernels*> backends_with_attention_batch() {
  std::vector<const Kernels*> with;
  for (const Kernels* k : backends())
    if (k->attention_batch) with.push_back(k);
  return with;
}

TEST_P(BatchedAttention, IsAttentionPerToken) {
  // n_heads, n_kv_heads, head_size, seq_len
  const int shapes[][4] = {{8, 4, 8, 24}, {6, 6, 48, 40}, {4, 1, 6, 19}, {3, 3, 10, 33}, {2, 1, 268, 21}};
  for (auto [n_heads, n_kv_heads, head_size, seq_len] : shapes) {
    const int kv_dim = n_kv_heads * head_size, dim = n_heads * head_size;
    const auto kc = random_floats(static_cast<std::size_t>(seq_len) * kv_dim, rng_);
    const auto vc = random_floats(static_cast<std::size_t>(seq_len) * kv_dim, rng_);
    // Blocks that start on and off a key tile, shorter and longer than a query tile, and one
    // that ends at the last position.
    for (auto [pos, count] : {std::pair{0, 1}, {0, 9}, {3, 4}, {7, 5}, {8, 3}, {seq_len - 6, 6}}) {
      const auto q = random_floats(static_cast<std::size_t>(count) * dim, rng_, 2.0f);
      std::vector<float> want(q.size()), got(q.size());
      std::vector<float> att(static_cast<std::size_t>(n_heads) * kAttentionQueryTile * seq_len);
      for (int t = 0; t < count; ++t)
        ref_.attention({want.data() + t * dim, att.data(), q.data() + t * dim, kc.data(), vc.data(), pos + t, n_heads,
                        n_kv_heads, head_size, kv_dim, seq_len});
      AttentionArgs args{got.data(), att.data(), q.data(), kc.data(), vc.data(), pos, n_heads, n_kv_heads, head_size,
                         kv_dim, seq_len};
      args.count = count;
      args.q_stride = dim;
      k_.attention_batch(args);
      expect_same_bits(want, got, "attention_batch pos=" + std::to_string(pos) + " count=" + std::to_string(count) +
                                      " head_size=" + std::to_string(head_size));
    }
  }
}

// run.c's SiLU, val * (1 / (1 + expf(-val))), has expf overflow to inf for val below
// -kSiluExpLimit (a trap on the PSP's FPU); the kernels skip expf there and must give the
// very same bits, signed zeros included, on both sides of the limit.
TEST_P(KernelEquivalence, SwigluMatchesRunCPastExpOverflow) {
  ASSERT_TRUE(std::isfinite(std::exp(reference::kSiluExpLimit)));
  ASSERT_TRUE(std::isinf(std::exp(std::nextafter(reference::kSiluExpLimit, 1e30f))));
  const float lim = reference::kSiluExpLimit;
  const std::vector<float> edge = {-lim,  std::nextafter(-lim, -1e30f), std::nextafter(-lim, 0.0f),
                                   -88.0f, -89.0f, -100.0f, -1e30f, -std::numeric_limits<float>::max(), -1.0f, 0.0f,
                                   3.0f,   88.0f, std::numeric_limits<float>::quiet_NaN()};
  const std::vector<float> gates = {2.0f, -3.0f, 1.0f, -1.0f, 0.5f, -0.5f, 7.0f, -7.0f, 1.0f, 1.0f, 2.0f, -2.0f, 1.0f};
  // Repeated past 64 values, so that vector backends take them in their vector steps too.
  std::vector<float> x, gate;
  for (int copy = 0; copy < 11; ++copy) {
    x.insert(x.end(), edge.begin(), edge.end());
    gate.insert(gate.end(), gates.begin(), gates.end());
  }
  std::vector<float> want(x.size()), got = x;
  for (std::size_t i = 0; i < x.size(); ++i) {
    volatile float e = std::exp(-x[i]);  // what run.c computes, overflow and all
    float val = x[i];
    val *= (1.0f / (1.0f + e));
    want[i] = val * gate[i];
  }
  k_.swiglu(got.data(), gate.data(), static_cast<int>(got.size()));
  expect_same_bits(want, got, "swiglu at the expf limit");
}

// ---- GGUF types: F16, Q8_0, Q4_0 and IQ4_XS weights (Q8_0 activations) ----

void expect_ggml_matmul_equal(const Kernels& ref, const Kernels& k, TensorType type, std::mt19937& rng) {
  // [d, n]: rows not a multiple of 4 or 8, a single block, many blocks (past avx2's 64-block
  // chunk); IQ4_XS's in whole super-blocks of 256 (the PLE table's 768 among them).
  const int shapes[][2] = {{1, 32}, {7, 64}, {8, 32}, {9, 96}, {13, 288}, {17, 768}, {33, 2176}, {64, 64}, {300, 288}};
  const int shapes256[][2] = {{1, 256}, {7, 512}, {8, 256}, {9, 768}, {13, 1280}, {17, 768}, {33, 2304}, {300, 256}};
  const bool super = block_elements(type, 0) == 256;
  const std::size_t count = super ? std::size(shapes256) : std::size(shapes);
  for (std::size_t s = 0; s < count; ++s) {
    const int d = super ? shapes256[s][0] : shapes[s][0], n = super ? shapes256[s][1] : shapes[s][1];
    const auto w = random_blocks(type, d, n, rng);
    const auto x = random_floats(static_cast<std::size_t>(n), rng, 4.0f);
    std::vector<unsigned char> xq(static_cast<std::size_t>(n / 32) * kQ8_0BlockBytes), xq2(xq.size());
    ref.quantize_act[type_index(TensorType::kQ8_0)](x.data(), n, 32, xq.data(), nullptr);
    k.quantize_act[type_index(TensorType::kQ8_0)](x.data(), n, 32, xq2.data(), nullptr);
    EXPECT_EQ(xq, xq2) << "quantize_q8_0 n=" << n;
    const Activation act{xq.data(), nullptr, n, 32};
    std::vector<float> want(static_cast<std::size_t>(d)), got(static_cast<std::size_t>(d));
    ref.matmul[type_index(type)](want.data(), Matrix{type, d, n, w.data(), nullptr, 0, 1}, act, d);
    int il = 1;
    const auto packed = pack_blocks(k, type, w, d, n, &il);
    const Matrix m{type, d, n, packed.data(), nullptr, 0, il};
    k.matmul[type_index(type)](got.data(), m, act, d);
    const std::string what = std::string("matmul_") + type_name(type) + " d=" + std::to_string(d) + " n=" + std::to_string(n);
    expect_same_bits(want, got, what);
    // As the workers call it: a view from row 32 (a whole number of interleaved blocks).
    if (d > 32) {
      std::vector<float> part(static_cast<std::size_t>(d - 32));
      k.matmul[type_index(type)](part.data(), rows_from(m, 32), act, d - 32);
      expect_same_bits(std::vector<float>(want.begin() + 32, want.end()), part, what + " from row 32");
    }
    // The same weights at an address one byte past a word boundary (a backend that loads aligned
    // words, tiled4's Q4_0, takes its bytewise path there).
    std::vector<unsigned char> shifted(packed.size() + 1);
    std::memcpy(shifted.data() + 1, packed.data(), packed.size());
    std::vector<float> odd(static_cast<std::size_t>(d));
    k.matmul[type_index(type)](odd.data(), Matrix{type, d, n, shifted.data() + 1, nullptr, 0, il}, act, d);
    expect_same_bits(want, odd, what + " at an odd address");
    // Every row dequantizes to what the reference layout gives.
    std::vector<float> a(static_cast<std::size_t>(n)), b(static_cast<std::size_t>(n));
    for (int r : {0, d / 2, d - 1}) {
      dequantize_matrix_row(Matrix{type, d, n, w.data(), nullptr, 0, 1}, r, a.data());
      dequantize_matrix_row(m, r, b.data());
      expect_same_bits(a, b, what + " dequantized row " + std::to_string(r));
    }
  }
}

TEST_P(KernelEquivalence, MatmulQ8_0) { expect_ggml_matmul_equal(ref_, k_, TensorType::kQ8_0, rng_); }
TEST_P(KernelEquivalence, MatmulQ4_0) { expect_ggml_matmul_equal(ref_, k_, TensorType::kQ4_0, rng_); }
TEST_P(KernelEquivalence, MatmulIQ4_XS) { expect_ggml_matmul_equal(ref_, k_, TensorType::kIQ4_XS, rng_); }

// The d x n matrix w (reference layout) of `type` against activations of magnitude 3.0 in
// every block (so that each Q8_0 block holds +-127), x[i] = -sign where negate(i / 32), else
// sign, for sign +1 and -1: `k`'s bits are the reference's.
template <class Negate>
void expect_limits_equal(const Kernels& ref, const Kernels& k, TensorType type, const std::vector<unsigned char>& w,
                         int d, int n, Negate negate) {
  for (float sign : {1.0f, -1.0f}) {
    std::vector<float> x(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) x[static_cast<std::size_t>(i)] = (negate(i / 32) ? -sign : sign) * 3.0f;
    std::vector<unsigned char> xq(static_cast<std::size_t>(n / 32) * kQ8_0BlockBytes);
    ref.quantize_act[type_index(TensorType::kQ8_0)](x.data(), n, 32, xq.data(), nullptr);
    ASSERT_EQ(static_cast<std::int8_t>(xq[2]), negate(0) == (sign > 0) ? -127 : 127);
    const Activation act{xq.data(), nullptr, n, 32};
    std::vector<float> want(static_cast<std::size_t>(d)), got(static_cast<std::size_t>(d));
    ref.matmul[type_index(type)](want.data(), Matrix{type, d, n, w.data(), nullptr, 0, 1}, act, d);
    int il = 1;
    const auto packed = pack_blocks(k, type, w, d, n, &il);
    k.matmul[type_index(type)](got.data(), Matrix{type, d, n, packed.data(), nullptr, 0, il}, act, d);
    expect_same_bits(want, got, std::string("matmul_") + type_name(type) + " at the limits, sign " + std::to_string(sign));
  }
}

// Q4_0 at its integer extremes: every nibble 15 or 0 against activations all +-127, so each
// half-block sum reaches its largest magnitude (16 x 15 x 127), which a backend packing two
// products into one 32-bit word (tiled4) must still get exact.
TEST_P(KernelEquivalence, MatmulQ4_0AtTheIntegerLimits) {
  const int d = 12, n = 128;
  const std::uint8_t patterns[] = {0xFF, 0x00, 0x0F, 0xF0};
  std::vector<unsigned char> w(static_cast<std::size_t>(d) * (n / 32) * kQ4_0BlockBytes);
  for (std::size_t b = 0; b < w.size() / kQ4_0BlockBytes; ++b) {
    unsigned char* blk = w.data() + b * kQ4_0BlockBytes;
    store_fp16(blk, fp32_to_fp16(b % 2 ? -0.5f : 1.0f));
    for (std::size_t i = 2; i < kQ4_0BlockBytes; ++i) blk[i] = patterns[(b / 3 + (i >= 10 ? 1 : 0)) % 4];
  }
  expect_limits_equal(ref_, k_, TensorType::kQ4_0, w, d, n, [](int block) { return block == 2; });
}

// IQ4_XS at its integer extremes: grid values -127 and 113 (nibbles 0 and 15) against
// activations all +-127, so each pair of products reaches 2 x 127 x 127, the most a backend's
// int16 pair sums (avx2's |x| times the signed grid) can hold; sub-block scales 0 and 63
// (ls - 32 = -32 and 31), 24 rows (an odd number of avx2 row groups) and 9 super-blocks (past
// a chunk of the x86 kernel).
TEST_P(KernelEquivalence, MatmulIQ4_XSAtTheIntegerLimits) {
  const int d = 24, n = 9 * kIQ4_XSBlock;
  const std::uint8_t patterns[] = {0x00, 0xFF, 0x0F, 0xF0};
  std::vector<unsigned char> w(static_cast<std::size_t>(d) * (n / kIQ4_XSBlock) * kIQ4_XSBlockBytes);
  for (std::size_t b = 0; b < w.size() / kIQ4_XSBlockBytes; ++b) {
    unsigned char* blk = w.data() + b * kIQ4_XSBlockBytes;
    store_fp16(blk, fp32_to_fp16(b % 2 ? -0.25f : 0.5f));
    blk[2] = b % 3 ? 0xFF : 0x00;  // scales_h: the high bits of ls, all 3 or all 0
    blk[3] = b % 3 ? 0x00 : 0xFF;
    for (int i = 4; i < 8; ++i) blk[i] = b % 2 ? 0x0F : 0xF0;  // scales_l: 15 and 0 alternating
    for (std::size_t i = 8; i < kIQ4_XSBlockBytes; ++i) blk[i] = patterns[(b / 2 + (i - 8) / 16) % 4];
  }
  expect_limits_equal(ref_, k_, TensorType::kIQ4_XS, w, d, n, [](int block) { return block % 3 == 1; });
}

TEST_P(KernelEquivalence, MatmulF16) {
  const int shapes[][2] = {{1, 1}, {7, 3}, {9, 17}, {33, 64}, {64, 172}};
  for (auto [d, n] : shapes) {
    std::vector<std::uint16_t> w(static_cast<std::size_t>(d) * n);
    const auto f = random_floats(w.size(), rng_, 2.0f);
    for (std::size_t i = 0; i < w.size(); ++i) w[i] = fp32_to_fp16(f[i]);
    const auto x = random_floats(static_cast<std::size_t>(n), rng_, 3.0f);
    const Activation act{x.data(), nullptr, n, 0};
    std::vector<float> want(static_cast<std::size_t>(d)), got(static_cast<std::size_t>(d));
    ref_.matmul[type_index(TensorType::kF16)](want.data(), Matrix{TensorType::kF16, d, n, w.data(), nullptr, 0, 1}, act, d);
    const int il = interleave_of(k_, TensorType::kF16, 0);
    std::vector<std::uint16_t> packed = w;
    for (int r = 0; il > 1 && r + il <= d; r += il)
      type_traits(TensorType::kF16).interleave_rows(packed.data() + static_cast<std::size_t>(r) * n, nullptr,
                                                    w.data() + static_cast<std::size_t>(r) * n, nullptr,
                                                    static_cast<std::size_t>(n), 0, static_cast<std::size_t>(il));
    k_.matmul[type_index(TensorType::kF16)](got.data(), Matrix{TensorType::kF16, d, n, packed.data(), nullptr, 0, il},
                                           act, d);
    expect_same_bits(want, got, "matmul_f16 d=" + std::to_string(d) + " n=" + std::to_string(n));
  }
}

// Q8_0 activations from hostile values: NaN -> 0, infinities and a subnormal scale (whose
// reciprocal overflows) clamp to +-127, the same bytes on every backend.
TEST_P(KernelEquivalence, QuantizeQ8_0HostileValues) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  const float tiny = std::numeric_limits<float>::denorm_min();
  std::vector<float> x(96, 0.0f);
  x[0] = nan; x[1] = 1.0f; x[2] = -1.0f; x[3] = 0.5f;                   // block 0
  x[32] = 127 * tiny; x[33] = -127 * tiny; x[34] = tiny; x[35] = nan;    // block 1: id = 1/d overflows
  x[64] = inf; x[65] = -3.0f; x[66] = 1e30f;                             // block 2: amax = inf
  std::vector<unsigned char> want(3 * kQ8_0BlockBytes), got(want.size());
  ref_.quantize_act[type_index(TensorType::kQ8_0)](x.data(), 96, 32, want.data(), nullptr);
  k_.quantize_act[type_index(TensorType::kQ8_0)](x.data(), 96, 32, got.data(), nullptr);
  EXPECT_EQ(want, got);
  const auto q = [&](int i) { return static_cast<int>(static_cast<std::int8_t>(got[static_cast<std::size_t>(i / 32) * kQ8_0BlockBytes + 2 + i % 32])); };
  EXPECT_EQ(q(0), 0);
  EXPECT_EQ(q(1), 127);
  EXPECT_EQ(q(2), -127);
  EXPECT_EQ(q(32), 127);
  EXPECT_EQ(q(33), -127);
  EXPECT_EQ(q(35), 0);
  for (int i = 0; i < 96; ++i) EXPECT_GE(q(i), -127);
}

TEST(KernelTable, EveryBackendCoversTheTypesOfLlama2cModels) {
  for (const Kernels* k : backends()) {
    EXPECT_TRUE(check_kernels_cover(*k, TensorType::kF32, "wq").ok()) << k->name;
    EXPECT_TRUE(check_kernels_cover(*k, TensorType::kQ80, "wq").ok()) << k->name;
    for (TensorType t : {TensorType::kF16, TensorType::kQ8_0, TensorType::kQ4_0, TensorType::kIQ4_XS})
      EXPECT_TRUE(check_kernels_cover(*k, t, "wq").ok()) << k->name << " " << type_name(t);
  }
  Kernels partial = reference_kernels();
  partial.quantize_act[type_index(TensorType::kQ80)] = nullptr;
  const Status st = check_kernels_cover(partial, TensorType::kQ80, "w2");
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), StatusCode::kUnsupported);
  EXPECT_NE(std::string(st.message()).find("w2"), std::string::npos) << st.message();
  EXPECT_NE(std::string(st.message()).find("q80"), std::string::npos) << st.message();
}

INSTANTIATE_TEST_SUITE_P(Backends, KernelEquivalence, ::testing::ValuesIn(backends()),
                         [](const auto& info) { return test::backend_test_name(info.param); });
// None on a build whose backends all run attention per token (mipsel: reference, tiled4).
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(BatchedAttention);
INSTANTIATE_TEST_SUITE_P(Backends, BatchedAttention, ::testing::ValuesIn(backends_with_attention_batch()),
                         [](const auto& info) { return test::backend_test_name(info.param); });

}  // namespace
}  // namespace pocketlm
