// Per-layer-embedding models (model/ple.h, docs/ple.md), the forward pass: against a plain
// implementation of the pinned arithmetic, and every backend bit-identical to reference (F32,
// Q8_0 and Q4_0 files, decode and batched prefill, 1 and 2 threads).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "pocketlm/kernels/gelu.h"
#include "golden_models.h"
#include "ple_file.h"
#include "test_support.h"

namespace pocketlm {
namespace {

using namespace gguf;
using namespace test::ple;

// ---- A plain implementation of docs/ple.md ---------------------------------------------------

// The same model computed the simplest way: float loops over the tensors as written (F32 file),
// RoPE's angles and GELU in double. Only the arithmetic is the spec's, not its order.
class Plain {
 public:
  Plain() {
    for (const Tensor& t : ple_tensors()) w_[t.name] = values_of(t);
    k_.assign(static_cast<std::size_t>(kLayers * kSeq * kKvDim), 0.0f);
    v_.assign(k_.size(), 0.0f);
  }

  std::vector<float> forward(int tok, int pos) {
    const float eps = 1e-5f;
    std::vector<float> x(w("token_embd.weight").begin() + tok * kDim, w("token_embd.weight").begin() + (tok + 1) * kDim);
    // The per-layer inputs.
    std::vector<float> q = matvec("per_layer_model_proj.weight", x, kLayers * kP);
    std::vector<float> ple(static_cast<std::size_t>(kLayers * kP));
    for (int l = 0; l < kLayers; ++l) {
      std::vector<float> slice(q.begin() + l * kP, q.begin() + (l + 1) * kP);
      for (float& s : slice) s /= std::sqrt(static_cast<float>(kDim));
      slice = rmsnorm(slice, w("per_layer_proj_norm.weight"), eps);
      for (int i = 0; i < kP; ++i) {
        const float t = w("per_layer_token_embd.weight")[static_cast<std::size_t>(tok * kLayers * kP + l * kP + i)];
        ple[static_cast<std::size_t>(l * kP + i)] = (slice[static_cast<std::size_t>(i)] + t * std::sqrt(float(kP))) /
                                                    std::sqrt(2.0f);
      }
    }
    const int hs = kDim / kHeads;
    for (int l = 0; l < kLayers; ++l) {
      const std::string b = "blk." + std::to_string(l) + ".";
      std::vector<float> xb = rmsnorm(x, w(b + "attn_norm.weight"), eps);
      std::vector<float> qv = matvec(b + "attn_q.weight", xb, kDim), kv = matvec(b + "attn_k.weight", xb, kKvDim),
                         vv = matvec(b + "attn_v.weight", xb, kKvDim);
      for (int i = 0; i < kDim; i += 2) {
        const double angle = pos / std::pow(10000.0, static_cast<double>(i % hs) / hs);
        rotate(&qv[static_cast<std::size_t>(i)], angle);
        if (i < kKvDim) rotate(&kv[static_cast<std::size_t>(i)], angle);
      }
      const std::size_t at = static_cast<std::size_t>((l * kSeq + pos) * kKvDim);
      std::copy(kv.begin(), kv.end(), k_.begin() + static_cast<std::ptrdiff_t>(at));
      std::copy(vv.begin(), vv.end(), v_.begin() + static_cast<std::ptrdiff_t>(at));
      std::vector<float> att_out(static_cast<std::size_t>(kDim), 0.0f);
      for (int h = 0; h < kHeads; ++h) {
        const int kvh = h / (kHeads / kKvHeads);
        std::vector<double> score(static_cast<std::size_t>(pos + 1));
        double mx = -1e30, sum = 0.0;
        for (int t = 0; t <= pos; ++t) {
          double s = 0.0;
          for (int i = 0; i < hs; ++i)
            s += static_cast<double>(qv[static_cast<std::size_t>(h * hs + i)]) *
                 k_[static_cast<std::size_t>((l * kSeq + t) * kKvDim + kvh * hs + i)];
          score[static_cast<std::size_t>(t)] = s / std::sqrt(static_cast<double>(hs));
          mx = std::max(mx, score[static_cast<std::size_t>(t)]);
        }
        for (double& s : score) sum += (s = std::exp(s - mx));
        for (int t = 0; t <= pos; ++t)
          for (int i = 0; i < hs; ++i)
            att_out[static_cast<std::size_t>(h * hs + i)] += static_cast<float>(
                score[static_cast<std::size_t>(t)] / sum * v_[static_cast<std::size_t>((l * kSeq + t) * kKvDim + kvh * hs + i)]);
      }
      add(x, matvec(b + "attn_output.weight", att_out, kDim));
      xb = rmsnorm(x, w(b + "ffn_norm.weight"), eps);
      std::vector<float> g = matvec(b + "ffn_gate.weight", xb, kHidden), u = matvec(b + "ffn_up.weight", xb, kHidden);
      for (int i = 0; i < kHidden; ++i) {
        const double gi = g[static_cast<std::size_t>(i)];
        g[static_cast<std::size_t>(i)] = static_cast<float>(gi / (1.0 + std::exp(-gi)) * u[static_cast<std::size_t>(i)]);
      }
      add(x, matvec(b + "ffn_down.weight", g, kDim));
      // The per-layer block, on the raw residual.
      std::vector<float> gate = matvec(b + "inp_gate.weight", x, kP);
      for (int i = 0; i < kP; ++i)
        gate[static_cast<std::size_t>(i)] = static_cast<float>(exact_gelu(gate[static_cast<std::size_t>(i)]) *
                                                               ple[static_cast<std::size_t>(l * kP + i)]);
      add(x, rmsnorm(matvec(b + "proj.weight", gate, kDim), w(b + "post_norm.weight"), eps));
    }
    return matvec("token_embd.weight", rmsnorm(x, w("output_norm.weight"), eps), kVocab);
  }

 private:
  const std::vector<float>& w(const std::string& name) { return w_.at(name); }
  std::vector<float> matvec(const std::string& name, const std::vector<float>& x, int rows) {
    const std::vector<float>& m = w(name);
    const std::size_t cols = x.size();
    std::vector<float> out(static_cast<std::size_t>(rows));
    for (std::size_t r = 0; r < out.size(); ++r) {
      double s = 0.0;
      for (std::size_t c = 0; c < cols; ++c) s += static_cast<double>(m[r * cols + c]) * x[c];
      out[r] = static_cast<float>(s);
    }
    return out;
  }
  static std::vector<float> rmsnorm(const std::vector<float>& x, const std::vector<float>& w, float eps) {
    double ss = 0.0;
    for (float v : x) ss += static_cast<double>(v) * v;
    const double inv = 1.0 / std::sqrt(ss / static_cast<double>(x.size()) + eps);
    std::vector<float> out(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) out[i] = static_cast<float>(w[i] * x[i] * inv);
    return out;
  }
  static void rotate(float* pair, double angle) {
    const double re = pair[0], im = pair[1];
    pair[0] = static_cast<float>(re * std::cos(angle) - im * std::sin(angle));
    pair[1] = static_cast<float>(re * std::sin(angle) + im * std::cos(angle));
  }
  static void add(std::vector<float>& x, const std::vector<float>& y) {
    for (std::size_t i = 0; i < x.size(); ++i) x[i] += y[i];
  }

  std::map<std::string, std::vector<float>> w_;
  std::vector<float> k_, v_;
};

TEST(PleModel, ComputesTheSpecsArithmetic) {
  const std::vector<float> engine = engine_logits(ple_file(), reference_kernels(), 1, 1);
  ASSERT_EQ(engine.size(), 14u * kVocab);
  // The same tokens through the plain model (the engine's greedy choices after the prompt).
  Plain plain;
  float largest = 0.0f, worst = 0.0f;
  int token = kPrompt[0];
  for (int pos = 0; pos < 14; ++pos) {
    const std::vector<float> want = plain.forward(token, pos);
    const float* got = engine.data() + static_cast<std::size_t>(pos) * kVocab;
    int best = 0;
    for (int i = 0; i < kVocab; ++i) {
      largest = std::max(largest, std::fabs(want[static_cast<std::size_t>(i)]));
      worst = std::max(worst, std::fabs(got[i] - want[static_cast<std::size_t>(i)]));
      best = got[i] > got[best] ? i : best;
    }
    token = pos + 1 < static_cast<int>(std::size(kPrompt)) ? kPrompt[pos + 1] : best;
  }
  EXPECT_GT(largest, 1.0f);  // the logits are not all alike
  EXPECT_LT(worst, 1e-4f * largest);
}

// ---- Every backend gives reference's bits ----------------------------------------------------

struct BackendCase {
  std::uint32_t type;
  const char* name;
};

class PleBackends : public ::testing::TestWithParam<BackendCase> {};

TEST_P(PleBackends, BitIdenticalToReference) {
  FileOptions o;
  o.matrix_type = GetParam().type;
  const std::vector<unsigned char> file = ple_file(o);
  const std::vector<float> want = engine_logits(file, reference_kernels(), 1, 1);
  ASSERT_EQ(want.size(), 14u * kVocab);
  for (const std::string& name : test::available_kernel_names()) {
    for (int threads : {1, 2}) {
      for (int batch : {1, 4}) {
        SCOPED_TRACE(name + ", " + std::to_string(threads) + " threads, prefill batch " + std::to_string(batch));
        const std::vector<float> got = engine_logits(file, *find_kernels(name.c_str()), threads, batch);
        // With batched prefill the prompt's first 4 tokens give no logits.
        const std::size_t skip = batch > 1 ? 4u * kVocab : 0u;
        ASSERT_EQ(got.size() + skip, want.size());
        EXPECT_EQ(std::memcmp(got.data(), want.data() + skip, got.size() * sizeof(float)), 0);
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Types, PleBackends,
                         ::testing::Values(BackendCase{kGgmlF32, "F32"}, BackendCase{kGgmlQ8_0, "Q8_0"},
                                           BackendCase{kGgmlQ4_0, "Q4_0"}),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace pocketlm
