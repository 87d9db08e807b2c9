// A batched matmul (kernels/batch.h) is B single-token matmuls sharing one read of the
// weights: on every backend, for every token, each output must carry the bits `reference`
// gives that token alone, on ragged shapes (rows not a multiple of the lanes or of the
// 32-row tiles, token counts around the kernels' token groups), with strided outputs, and
// from a view that starts mid-matrix as the worker split makes them.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "pocketlm/kernels/batch.h"
#include "pocketlm/kernels/kernels.h"
#include "pocketlm/quant/q8_0.h"
#include "pocketlm/quant/q80_interleave.h"
#include "pocketlm/quant/row_interleave.h"
#include "kernel_test_support.h"

namespace pocketlm {
namespace {

using test::random_floats;

std::vector<const Kernels*> backends() { return test::available_backends(); }


// Compares out (token t at t * stride) with want (token t at t * rows), bit for bit.
void expect_tokens(const std::vector<float>& want, const std::vector<float>& got, int tokens, int rows,
                   std::size_t stride, const std::string& what) {
  for (int t = 0; t < tokens; ++t)
    for (int r = 0; r < rows; ++r) {
      const float a = want[static_cast<std::size_t>(t) * rows + r], b = got[t * stride + r];
      if (std::memcmp(&a, &b, sizeof a) != 0) {
        ADD_FAILURE() << what << ": token " << t << " row " << r << " is " << b << ", one-token reference " << a;
        return;
      }
    }
}

// Rows [32, d) of w through a view, as a worker computes its share, against got (all rows, token
// t at t * stride): the same bits. Nothing to check for d <= 32.
void expect_view_matches(const Kernels& k, const Matrix& w, const ActivationBatch& in, const std::vector<float>& got,
                         std::size_t stride, const std::string& what) {
  const int d = w.rows;
  if (d <= 32) return;
  std::vector<float> part(stride * in.count, -1.0f);
  matmul_batch(k, part.data() + 32, stride, rows_from(w, 32), in, d - 32);
  for (int t = 0; t < in.count; ++t)
    for (int r = 32; r < d; ++r)
      ASSERT_EQ(std::memcmp(&part[t * stride + r], &got[t * stride + r], sizeof(float)), 0) << what << " view";
}

class BatchedMatmul : public ::testing::TestWithParam<const Kernels*> {
 protected:
  const Kernels& ref_ = reference_kernels();
  const Kernels& k_ = *GetParam();
  std::mt19937 rng_{12};
};

// Token counts around the kernels' token groups (4 rows or tokens; avx2's 64 per weight tile).
constexpr int kTokenCounts[] = {1, 2, 3, 4, 5, 7, 9, 64, 65};

TEST_P(BatchedMatmul, Q80EqualsOneTokenAtATime) {
  // {rows, cols, group}: the tiles of the generic path hold ~16 KiB of rows, so 600 x 288 and
  // 100 x 768 span several tiles; 37 and 13 rows end in a ragged tail; 2112 columns in groups of
  // 32 are more than one chunk of 64 groups (kernels/x86_q80.h).
  const int shapes[][3] = {{1, 32, 32}, {8, 64, 32}, {13, 6, 2}, {37, 96, 32}, {100, 768, 32},
                           {600, 288, 32}, {41, 288, 96}, {33, 48, 16}, {64, 128, 64}, {48, 2112, 32},
                           {21, 36, 12}};
  for (auto [d, n, gs] : shapes) {
    std::uniform_int_distribution<int> byte(-128, 127);
    std::vector<std::int8_t> wq(static_cast<std::size_t>(d) * n);
    for (auto& v : wq) v = static_cast<std::int8_t>(byte(rng_));
    const auto ws = random_floats(static_cast<std::size_t>(d) * n / gs, rng_, 0.02f);
    std::vector<std::int8_t> pq;
    std::vector<float> ps;
    const int il = test::interleave_q80_for(k_, wq, ws, d, n, gs, &pq, &ps);
    const Matrix ref_w{TensorType::kQ80, d, n, wq.data(), ws.data(), gs, 1};
    const Matrix w{TensorType::kQ80, d, n, pq.data(), ps.data(), gs, il};
    for (int tokens : kTokenCounts) {
      // Each token's input quantized on its own, as the forward pass does.
      const auto x = random_floats(static_cast<std::size_t>(tokens) * n, rng_, 4.0f);
      std::vector<std::int8_t> xq(x.size());
      std::vector<float> xs(x.size() / gs);
      std::vector<float> want(static_cast<std::size_t>(tokens) * d);
      for (int t = 0; t < tokens; ++t) {
        const std::size_t o = static_cast<std::size_t>(t) * n;
        k_.quantize_act[type_index(TensorType::kQ80)](x.data() + o, n, gs, xq.data() + o, xs.data() + o / gs);
        ref_.matmul[type_index(TensorType::kQ80)](want.data() + static_cast<std::size_t>(t) * d, ref_w,
                                                   Activation{xq.data() + o, xs.data() + o / gs, n, gs}, d);
      }
      const ActivationBatch in{xq.data(), xs.data(), n, gs, tokens, static_cast<std::size_t>(n),
                               static_cast<std::size_t>(n / gs)};
      const std::size_t stride = static_cast<std::size_t>(d) + 3;  // outputs need not be packed
      std::vector<float> got(stride * tokens, -1.0f);
      matmul_batch(k_, got.data(), stride, w, in, d);
      const std::string what = std::string(k_.name) + " q80 d=" + std::to_string(d) + " n=" + std::to_string(n) +
                               " gs=" + std::to_string(gs) + " tokens=" + std::to_string(tokens);
      expect_tokens(want, got, tokens, d, stride, what);
      expect_view_matches(k_, w, in, got, stride, what);
    }
  }
}

// The largest sums the int8 kernels keep in narrow lanes: every weight 127, -127 or -128 and
// every activation +-127 (a constant input quantizes to 127 in every position), so that each
// vpmaddubsw pair of the sign trick (|w| * x, up to 2 * 128 * 127) is at its bound, in groups of
// 32 and 64.
TEST_P(BatchedMatmul, Q80AtTheIntegerLimits) {
  for (int gs : {32, 64}) {
    const int d = 24, n = 4 * gs, tokens = 5;
    std::vector<std::int8_t> wq(static_cast<std::size_t>(d) * n);
    for (std::size_t i = 0; i < wq.size(); ++i) wq[i] = (i / n) % 3 == 2 ? -128 : ((i / n) % 3 == 1 ? -127 : 127);
    const std::vector<float> ws(wq.size() / gs, 0.5f);
    std::vector<std::int8_t> pq;
    std::vector<float> ps;
    const int il = test::interleave_q80_for(k_, wq, ws, d, n, gs, &pq, &ps);
    const Matrix ref_w{TensorType::kQ80, d, n, wq.data(), ws.data(), gs, 1};
    const Matrix w{TensorType::kQ80, d, n, pq.data(), ps.data(), gs, il};
    std::vector<float> x(static_cast<std::size_t>(tokens) * n);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = (i / n) % 2 ? -3.0f : 3.0f;
    std::vector<std::int8_t> xq(x.size());
    std::vector<float> xs(x.size() / gs), want(static_cast<std::size_t>(tokens) * d);
    for (int t = 0; t < tokens; ++t) {
      const std::size_t o = static_cast<std::size_t>(t) * n;
      k_.quantize_act[type_index(TensorType::kQ80)](x.data() + o, n, gs, xq.data() + o, xs.data() + o / gs);
      ASSERT_EQ(std::abs(xq[o]), 127);
      ref_.matmul[type_index(TensorType::kQ80)](want.data() + static_cast<std::size_t>(t) * d, ref_w,
                                                 Activation{xq.data() + o, xs.data() + o / gs, n, gs}, d);
    }
    const ActivationBatch in{xq.data(), xs.data(), n, gs, tokens, static_cast<std::size_t>(n),
                             static_cast<std::size_t>(n / gs)};
    std::vector<float> got(static_cast<std::size_t>(tokens) * d, -1.0f);
    matmul_batch(k_, got.data(), static_cast<std::size_t>(d), w, in, d);
    expect_tokens(want, got, tokens, d, static_cast<std::size_t>(d), std::string(k_.name) + " gs=" + std::to_string(gs));
  }
}

// GGUF block types (Q8_0 activations): Q8_0 and Q4_0 through the batched slots (x86, neon, and
// tiled4 on MIPS), IQ4_XS through the generic path; rows around the 4-, 8- and 16-row groups and
// past one 32-row tile, more blocks than one chunk of the x86 kernel (32) and one pass of neon's
// (64), token counts around the token groups of 2 and 4.
TEST_P(BatchedMatmul, GgmlEqualsOneTokenAtATime) {
  const int shapes[][2] = {{1, 32}, {8, 64}, {13, 96}, {37, 288}, {64, 1088}, {100, 768}, {20, 2336}};
  const int shapes256[][2] = {{9, 256}, {37, 768}};
  for (TensorType type : {TensorType::kQ8_0, TensorType::kQ4_0, TensorType::kIQ4_XS}) {
    const bool super = type == TensorType::kIQ4_XS;
    for (std::size_t s = 0; s < (super ? std::size(shapes256) : std::size(shapes)); ++s) {
      const int d = super ? shapes256[s][0] : shapes[s][0], n = super ? shapes256[s][1] : shapes[s][1];
      const auto wb = test::random_blocks(type, d, n, rng_);
      int il = 1;
      const auto packed = test::pack_blocks(k_, type, wb, d, n, &il);
      const Matrix ref_w{type, d, n, wb.data(), nullptr, 0, 1};
      const Matrix w{type, d, n, packed.data(), nullptr, 0, il};
      const std::size_t xbytes = static_cast<std::size_t>(n / 32) * kQ8_0BlockBytes;
      for (int tokens : kTokenCounts) {
        const auto x = random_floats(static_cast<std::size_t>(tokens) * n, rng_, 4.0f);
        std::vector<unsigned char> xq(static_cast<std::size_t>(tokens) * xbytes);
        std::vector<float> want(static_cast<std::size_t>(tokens) * d);
        for (int t = 0; t < tokens; ++t) {
          unsigned char* xt = xq.data() + static_cast<std::size_t>(t) * xbytes;
          k_.quantize_act[type_index(TensorType::kQ8_0)](x.data() + static_cast<std::size_t>(t) * n, n, 32, xt, nullptr);
          ref_.matmul[type_index(type)](want.data() + static_cast<std::size_t>(t) * d, ref_w,
                                        Activation{xt, nullptr, n, 32}, d);
        }
        const ActivationBatch in{xq.data(), nullptr, n, 32, tokens, xbytes, 0};
        const std::size_t stride = static_cast<std::size_t>(d) + 5;
        std::vector<float> got(stride * tokens, -1.0f);
        matmul_batch(k_, got.data(), stride, w, in, d);
        const std::string what = std::string(k_.name) + " " + type_name(type) + " d=" + std::to_string(d) +
                                 " n=" + std::to_string(n) + " tokens=" + std::to_string(tokens);
        expect_tokens(want, got, tokens, d, stride, what);
        expect_view_matches(k_, w, in, got, stride, what);
      }
    }
  }
}

TEST_P(BatchedMatmul, F32EqualsOneTokenAtATime) {
  const int shapes[][2] = {{1, 1}, {9, 17}, {33, 64}, {100, 289}, {770, 64}, {40, 1}};
  for (auto [d, n] : shapes) {
    const auto w = random_floats(static_cast<std::size_t>(d) * n, rng_, 1.0f);
    const int il = interleave_of(k_, TensorType::kF32, 0);
    std::vector<float> packed(w.size());
    for (int r = 0; r < d; ++r)
      for (int j = 0; j < n; ++j)
        packed[interleaved_index(static_cast<std::size_t>(r), static_cast<std::size_t>(j), static_cast<std::size_t>(n),
                                 static_cast<std::size_t>(d), static_cast<std::size_t>(il))] =
            w[static_cast<std::size_t>(r) * n + j];
    const Matrix ref_w{TensorType::kF32, d, n, w.data(), nullptr, 0, 1};
    const Matrix pw{TensorType::kF32, d, n, packed.data(), nullptr, 0, il};
    for (int tokens : kTokenCounts) {
      const auto x = random_floats(static_cast<std::size_t>(tokens) * n, rng_, 3.0f);
      std::vector<float> want(static_cast<std::size_t>(tokens) * d);
      for (int t = 0; t < tokens; ++t)
        ref_.matmul[type_index(TensorType::kF32)](want.data() + static_cast<std::size_t>(t) * d, ref_w,
                                                   Activation{x.data() + static_cast<std::size_t>(t) * n, nullptr, n, 0},
                                                   d);
      const ActivationBatch in{x.data(), nullptr, n, 0, tokens, static_cast<std::size_t>(n) * sizeof(float), 0};
      const std::size_t stride = static_cast<std::size_t>(d) + 1;
      std::vector<float> got(stride * tokens, -1.0f);
      matmul_batch(k_, got.data(), stride, pw, in, d);
      expect_tokens(want, got, tokens, d, stride,
                    std::string(k_.name) + " f32 d=" + std::to_string(d) + " n=" + std::to_string(n) + " tokens=" +
                        std::to_string(tokens));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, BatchedMatmul, ::testing::ValuesIn(backends()),
                         [](const ::testing::TestParamInfo<const Kernels*>& info) { return test::backend_test_name(info.param); });

}  // namespace
}  // namespace pocketlm
