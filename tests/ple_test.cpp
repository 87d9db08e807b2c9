// Per-layer-embedding models (model/ple.h, docs/ple.md): the engine's own GELU against the
// exact one; the forward pass against a plain implementation of the pinned arithmetic; every
// backend bit-identical to reference (F32, Q8_0 and Q4_0 files, decode and batched prefill, 1
// and 2 threads); the model with its per-layer table in storage gives the resident run's tokens
// reading exactly one table row per token; bad files get one-line errors naming the tensor.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cfenv>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "pocketlm/format/gguf.h"
#include "pocketlm/format/gguf_writer.h"
#include "pocketlm/format/model_reader.h"
#include "pocketlm/io/memory_storage.h"
#include "pocketlm/kernels/gelu.h"
#include "pocketlm/memory/arena.h"
#include "pocketlm/memory/memory_plan.h"
#include "pocketlm/model/model_kind.h"
#include "pocketlm/quant/q4_0.h"
#include "pocketlm/quant/q8_0.h"
#include "device_catalog.h"
#include "golden_models.h"
#include "ports/posix/file_storage.h"
#include "ports/posix/thread_pool.h"
#include "pocketlm/runtime/session.h"
#include "test_support.h"

namespace pocketlm {
namespace {

using namespace gguf;

// ---- GELU -----------------------------------------------------------------------------------

double exact_gelu(float x) { return 0.5 * x * std::erfc(-static_cast<double>(x) / std::sqrt(2.0)); }

TEST(Gelu, IsTheErfFormToAboutOneUlp) {
  double worst = 0.0;
  for (float x = -14.0f; x <= 14.0f; x += 1.0f / 1024) {
    const double err = std::fabs(gelu(x) - exact_gelu(x)) / std::fmax(1.0, std::fabs(x));
    worst = std::fmax(worst, err);
  }
  EXPECT_LT(worst, 1.2e-7);
  // The negative tail, where the value is tiny, keeps its relative precision.
  for (float x : {-3.0f, -5.0f, -7.5f, -10.0f})
    EXPECT_NEAR(gelu(x) / exact_gelu(x), 1.0, 3e-6) << x;
}

TEST(Gelu, SpecialValuesRaiseNoTrappedException) {
  // The PSP's FPU traps on overflow, invalid and divide-by-zero: none may happen.
  std::feclearexcept(FE_ALL_EXCEPT);
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(gelu(inf), inf);
  EXPECT_EQ(gelu(-inf), 0.0f);
  EXPECT_TRUE(std::signbit(gelu(-inf)));
  EXPECT_EQ(gelu(FLT_MAX), FLT_MAX);
  EXPECT_EQ(gelu(-FLT_MAX), 0.0f);
  EXPECT_EQ(gelu(0.0f), 0.0f);
  EXPECT_EQ(gelu(FLT_MIN), 0.5f * FLT_MIN);
  for (float x = -30.0f; x <= 30.0f; x += 0.001f) (void)gelu(x);
  EXPECT_FALSE(std::fetestexcept(FE_OVERFLOW | FE_INVALID | FE_DIVBYZERO));
  EXPECT_TRUE(std::isnan(gelu(std::numeric_limits<float>::quiet_NaN())));
}

// ---- A small PLE file ------------------------------------------------------------------------

// dim 64, hidden_dim 96, 2 layers, 4 heads (2 kv heads), vocab 96, seq_len 32, per_layer_dim 32:
// every matrix is whole blocks of 32, so the file can be Q8_0 or Q4_0.
constexpr int kDim = 64, kHidden = 96, kLayers = 2, kHeads = 4, kKvHeads = 2, kVocab = 96, kSeq = 32, kP = 32;
constexpr int kKvDim = kDim / kHeads * kKvHeads;

struct Tensor {
  std::string name;
  int rows, cols;
};

std::vector<Tensor> ple_tensors() {
  std::vector<Tensor> t = {{"token_embd.weight", kVocab, kDim},
                           {"per_layer_token_embd.weight", kVocab, kLayers * kP},
                           {"per_layer_model_proj.weight", kLayers * kP, kDim},
                           {"per_layer_proj_norm.weight", 1, kP}};
  for (int l = 0; l < kLayers; ++l) {
    const std::string b = "blk." + std::to_string(l) + ".";
    for (const Tensor& x : {Tensor{"attn_norm.weight", 1, kDim}, Tensor{"attn_q.weight", kDim, kDim},
                            Tensor{"attn_k.weight", kKvDim, kDim}, Tensor{"attn_v.weight", kKvDim, kDim},
                            Tensor{"attn_output.weight", kDim, kDim}, Tensor{"ffn_norm.weight", 1, kDim},
                            Tensor{"ffn_gate.weight", kHidden, kDim}, Tensor{"ffn_down.weight", kDim, kHidden},
                            Tensor{"ffn_up.weight", kHidden, kDim}, Tensor{"inp_gate.weight", kP, kDim},
                            Tensor{"proj.weight", kDim, kP}, Tensor{"post_norm.weight", 1, kDim}})
      t.push_back({b + x.name, x.rows, x.cols});
  }
  t.push_back({"output_norm.weight", 1, kDim});
  return t;
}

// Values that depend on the tensor's name only: norms near 1, matrices of about unit gain.
std::vector<float> values_of(const Tensor& t) {
  std::uint32_t seed = 2166136261u;
  for (char c : t.name) seed = (seed ^ static_cast<unsigned char>(c)) * 16777619u;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> v(static_cast<std::size_t>(t.rows) * static_cast<std::size_t>(t.cols));
  const float scale = t.rows == 1 ? 0.25f : 1.7f / std::sqrt(static_cast<float>(t.cols));
  for (float& x : v) x = t.rows == 1 ? 1.0f + scale * u(rng) : scale * u(rng);
  return v;
}

struct FileOptions {
  std::uint32_t matrix_type = kGgmlF32;
  int p_key = kP;               // embedding_length_per_layer_input as written
  std::string drop;             // a tensor left out
  int table_cols = kLayers * kP;  // per_layer_token_embd's columns
};

std::vector<unsigned char> ple_file(const FileOptions& o = {}) {
  std::vector<Tensor> tensors;
  for (Tensor t : ple_tensors()) {
    if (t.name == o.drop) continue;
    if (t.name == "per_layer_token_embd.weight") t.cols = o.table_cols;
    tensors.push_back(t);
  }
  test::VectorSink sink;
  GgufWriter w(sink);
  const std::string a = "pocketlm-ple.";
  EXPECT_TRUE(w.begin(tensors.size(), 10).ok());
  EXPECT_TRUE(w.kv_string(key::kArchitecture, "pocketlm-ple").ok());
  for (const auto& [k, v] : std::vector<std::pair<std::string, int>>{{"context_length", kSeq},
                                                                     {"embedding_length", kDim},
                                                                     {"feed_forward_length", kHidden},
                                                                     {"block_count", kLayers},
                                                                     {"attention.head_count", kHeads},
                                                                     {"attention.head_count_kv", kKvHeads},
                                                                     {"embedding_length_per_layer_input", o.p_key}})
    EXPECT_TRUE(w.kv_u32((a + k).c_str(), static_cast<std::uint32_t>(v)).ok());
  EXPECT_TRUE(w.kv_f32((a + "attention.layer_norm_rms_epsilon").c_str(), 1e-5f).ok());
  EXPECT_TRUE(w.kv_u32((a + "rope.dimension_count").c_str(), kDim / kHeads).ok());
  std::vector<std::uint32_t> types;
  std::vector<std::uint64_t> sizes;
  for (const Tensor& t : tensors) {
    const std::uint32_t type = t.rows == 1 ? kGgmlF32 : o.matrix_type;
    std::uint64_t bytes = 0;
    EXPECT_TRUE(w.tensor_info(t.name.c_str(), static_cast<std::uint64_t>(t.rows), static_cast<std::uint64_t>(t.cols),
                              type, &bytes)
                    .ok())
        << t.name;
    types.push_back(type);
    sizes.push_back(bytes);
  }
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const std::vector<float> v = values_of(tensors[i]);
    std::vector<unsigned char> bytes(static_cast<std::size_t>(sizes[i]));
    if (types[i] == kGgmlQ8_0)
      quantize_q8_0(v.data(), v.size(), bytes.data());
    else if (types[i] == kGgmlQ4_0)
      quantize_q4_0(v.data(), v.size(), bytes.data());
    else
      std::memcpy(bytes.data(), v.data(), bytes.size());
    EXPECT_TRUE(w.begin_tensor(sizes[i]).ok());
    EXPECT_TRUE(w.tensor_data(bytes.data(), bytes.size()).ok());
  }
  EXPECT_TRUE(w.finish().ok());
  return sink.bytes();
}

// ---- The engine's logits --------------------------------------------------------------------

constexpr int kPrompt[] = {1, 17, 5, 42, 88, 3};

// The logits of every forward() call: the prompt (its first 4 tokens through forward_batch when
// `batch` > 1), then 8 greedy tokens; reference's backend unless `kernels` says otherwise.
std::vector<float> engine_logits(const std::vector<unsigned char>& file, const Kernels& kernels, int threads,
                                 int batch) {
  MemoryStorage storage(file.data(), file.size(), "ple.gguf");
  ModelSpec spec;
  const Status read = read_model_spec(storage, &spec);
  EXPECT_TRUE(read.ok()) << read.message();
  test::LoadedModel loaded(storage, spec, kSeq, kernels, batch);
  Model* model = loaded.model;
  if (!model) return {};
  std::unique_ptr<ThreadPool> pool;
  if (threads > 1) {
    pool = std::make_unique<ThreadPool>(threads);
    model->set_parallel(pool.get());
  }
  std::vector<float> out;
  int pos = 0;
  if (batch > 1) {
    model->forward_batch(kPrompt, 4, 0);
    pos = 4;
  }
  int token = kPrompt[pos];
  for (; pos < kSeq && pos < 14; ++pos) {
    const float* l = model->forward(token, pos);
    out.insert(out.end(), l, l + kVocab);
    int best = 0;
    for (int i = 1; i < kVocab; ++i) best = l[i] > l[best] ? i : best;
    token = pos + 1 < static_cast<int>(std::size(kPrompt)) ? kPrompt[pos + 1] : best;
  }
  return out;
}

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

// ---- Bad files ------------------------------------------------------------------------------

std::string read_error(const std::vector<unsigned char>& file) {
  MemoryStorage storage(file.data(), file.size(), "ple.gguf");
  ModelSpec spec;
  const Status st = read_model_spec(storage, &spec);
  return st.ok() ? "" : st.message();
}

TEST(PleFile, BadFilesNameTheTensorAndTheField) {
  EXPECT_EQ(read_error(ple_file()), "");
  FileOptions missing;
  missing.drop = "per_layer_model_proj.weight";
  EXPECT_EQ(read_error(ple_file(missing)), "ple.gguf: GGUF tensor per_layer_model_proj.weight is missing");
  FileOptions gate;
  gate.drop = "blk.1.inp_gate.weight";
  EXPECT_NE(read_error(ple_file(gate)).find("blk.1.inp_gate.weight"), std::string::npos);
  FileOptions wrong_p;
  wrong_p.p_key = 16;
  EXPECT_EQ(read_error(ple_file(wrong_p)),
            "ple.gguf: GGUF tensor per_layer_token_embd.weight has shape [96, 64] (rows, columns); expected "
            "[vocab_size, 32] (columns: n_layers x per_layer_dim)");
  FileOptions table;
  table.table_cols = kLayers * kP + 32;
  EXPECT_EQ(read_error(ple_file(table)),
            "ple.gguf: GGUF tensor per_layer_token_embd.weight has shape [96, 96] (rows, columns); expected "
            "[vocab_size, 64] (columns: n_layers x per_layer_dim)");
}

// An IQ4_XS tensor whose rows are not whole super-blocks: the file's table (64 columns) with
// its type field changed from Q4_0 to IQ4_XS (23) in place.
TEST(PleFile, IQ4_XSRowsMustBeWholeSuperBlocks) {
  FileOptions o;
  o.matrix_type = kGgmlQ4_0;
  std::vector<unsigned char> file = ple_file(o);
  const std::string name = "per_layer_token_embd.weight";
  const auto at = std::search(file.begin(), file.end(), name.begin(), name.end()) - file.begin();
  const std::size_t type_at = static_cast<std::size_t>(at) + name.size() + 4 + 2 * 8;  // n_dims, 2 dims
  ASSERT_EQ(file[type_at], kGgmlQ4_0);
  file[type_at] = kGgmlIQ4_XS;
  EXPECT_EQ(read_error(file),
            "ple.gguf: GGUF tensor per_layer_token_embd.weight has 64 columns, not a multiple of IQ4_XS's block of 256");
}

TEST(PleFile, ConvertKeepsTheKindAndTakesATypePerRole) {
  const std::string dir = test::temp_dir();
  const std::string in = dir + "/ple.gguf", out = dir + "/ple-q.gguf", v2 = dir + "/ple.bin";
  test::write_file(in, ple_file());
  const std::string before = test::sha256_of(in);
  const test::CommandResult r = test::run_pocketlm(
      {"convert", in, "--to", "gguf", "--type", "q8_0", "--tensor-type", "ple_table=q4_0", "-o", out});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("matrices q8_0, ple_table q4_0"), std::string::npos) << r.out;
  FileStorage converted;
  ASSERT_TRUE(converted.open(out.c_str(), "model").ok());
  ModelSpec spec;
  ASSERT_TRUE(read_model_spec(converted, &spec).ok());
  EXPECT_STREQ(spec.architecture, "pocketlm-ple");
  EXPECT_EQ(spec.config.per_layer_dim, kP);
  EXPECT_EQ(spec.type(TensorRole::kPleTable), TensorType::kQ4_0);
  EXPECT_EQ(spec.type(TensorRole::kPleGate), TensorType::kQ8_0);
  EXPECT_EQ(spec.type(TensorRole::kPlePostNorm), TensorType::kF32);
  // A llama2.c file cannot hold the PLE tensors: refused, nothing written, the input as it was.
  const test::CommandResult q80 = test::run_pocketlm({"convert", in, "--to", "q80", "-o", v2});
  EXPECT_EQ(q80.exit_code, 1);
  EXPECT_EQ(q80.err, "pocketlm: error: " + in + ": architecture 'pocketlm-ple' has tensors a llama2.c file cannot "
                     "hold (use --to gguf)\n");
  EXPECT_FALSE(test::file_exists(v2));
  const test::CommandResult norm =
      test::run_pocketlm({"convert", in, "--to", "gguf", "--tensor-type", "ple_post_norm=q4_0", "-o", v2});
  EXPECT_EQ(norm.exit_code, 1);
  EXPECT_NE(norm.err.find("--tensor-type: 'ple_post_norm=q4_0' names no matrix"), std::string::npos) << norm.err;
  EXPECT_EQ(test::sha256_of(in), before);
}

// IQ4_XS needs rows of whole 256-value super-blocks: this file's 64- and 32-column matrices are
// written Q4_0 instead, and the summary says which.
TEST(PleFile, IQ4_XSFallsBackToQ4_0ForShortRows) {
  const std::string dir = test::temp_dir();
  const std::string in = dir + "/ple.gguf", out = dir + "/ple-iq.gguf";
  test::write_file(in, ple_file());
  const test::CommandResult r = test::run_pocketlm(
      {"convert", in, "--to", "gguf", "--type", "q8_0", "--tensor-type", "ple_table=iq4_xs", "-o", out});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("ple_table iq4_xs, no tokenizer (give -z to run it); Q4_0 for per_layer_token_embd.weight "
                       "(columns not a multiple of 256)"),
            std::string::npos)
      << r.out;
  FileStorage converted;
  ASSERT_TRUE(converted.open(out.c_str(), "model").ok());
  ModelSpec spec;
  ASSERT_TRUE(read_model_spec(converted, &spec).ok());
  EXPECT_EQ(spec.type(TensorRole::kPleTable), TensorType::kQ4_0);
  EXPECT_EQ(spec.type(TensorRole::kPleGate), TensorType::kQ8_0);
}

// ---- The ESP32 shape with its table in flash ------------------------------------------------

// A Storage that records where each read starts.
class RecordingStorage final : public Storage {
 public:
  explicit RecordingStorage(Storage& inner) : inner_(inner) {}
  const char* name() const override { return inner_.name(); }
  std::uint64_t size() const override { return inner_.size(); }
  Status read(std::uint64_t offset, void* dst, std::size_t bytes) override {
    reads.push_back({offset, bytes});
    return inner_.read(offset, dst, bytes);
  }
  std::vector<std::pair<std::uint64_t, std::size_t>> reads;

 private:
  Storage& inner_;
};

struct Generated {
  std::vector<int> tokens;  // every token a forward pass ran, in order
};

bool record(std::int32_t prev, std::int32_t /*next*/, void* ctx) {
  static_cast<Generated*>(ctx)->tokens.push_back(prev);
  return true;
}

// The Q4_0 file, and the same with the table in IQ4_XS (the size that fits 16 MiB of flash).
struct TableCase {
  const char* file;
  TensorType table_type;
  std::uint64_t row_bytes;
  bool fits_16mib;  // with Llama 2's tokenizer.bin beside it on the esp32s3 profile's flash
};
class PleEsp32Table : public ::testing::TestWithParam<TableCase> {};

TEST_P(PleEsp32Table, TheTableStaysInFlashAndATokenReadsOneRow) {
  POCKETLM_REQUIRE_FILES("models/tokenizer.bin");
  test::Esp32PleFiles files(GetParam().file);
  ASSERT_FALSE(HasFailure());
  FileStorage& file = files.model;
  FileStorage& tokenizer = files.tokenizer;
  ModelSpec spec;
  ASSERT_TRUE(read_model_spec(file, &spec).ok());
  const TensorInfo table = spec.tensor(TensorRole::kPleTable, -1);
  EXPECT_EQ(table.type, GetParam().table_type);
  const std::uint64_t row = table.bytes() / table.rows;
  EXPECT_EQ(row, GetParam().row_bytes);  // at most the write-up's 450

  // The esp32s3 profile; for a file that does not fit its 16 MiB of flash beside the tokenizer
  // (which the plan must say), the same board with 32 MiB (an N32R8 module).
  const DeviceProfile* esp32s3 = cli::DeviceCatalog::builtin().find("esp32s3");
  ASSERT_NE(esp32s3, nullptr);
  DeviceProfile device_32mib = *esp32s3;
  device_32mib.tiers[2].capacity = 32u << 20;
  if (!GetParam().fits_16mib) {
    SessionOptions options;
    options.device = esp32s3;
    Session session;
    const Status st = session.open(file, tokenizer, options);
    ASSERT_FALSE(st.ok());
    EXPECT_NE(std::string(st.message()).find("with its tokenizer file (433869 bytes"), std::string::npos)
        << st.message();
  }
  std::vector<int> resident_tokens;
  for (const char* device : {"none", "esp32s3"}) {
    SCOPED_TRACE(device);
    RecordingStorage recorded(file);
    SessionOptions options;
    options.prefill_batch = 1;  // one pass per token, so each pass's reads can be told apart
    if (std::string(device) != "none") options.device = GetParam().fits_16mib ? esp32s3 : &device_32mib;
    Session session;
    const Status st = session.open(recorded, tokenizer, options);
    ASSERT_TRUE(st.ok()) << st.message();
    recorded.reads.clear();  // the load's
    const char* text = "Once upon a time";
    std::size_t capacity = 0;
    ASSERT_TRUE(session.prompt_capacity(std::strlen(text), &capacity).ok());
    std::vector<std::int32_t> prompt(capacity);
    int n = 0;
    ASSERT_TRUE(session.encode(text, std::strlen(text), prompt.data(), capacity, &n).ok());
    Generated g;
    GenerateStats stats;
    SamplerParams greedy;
    greedy.temperature = 0.0f;
    const Status gen = session.generate(prompt.data(), n, 24, greedy, record, &g, &stats);
    ASSERT_TRUE(gen.ok()) << gen.message();
    if (!options.device) {
      EXPECT_EQ(stats.storage_bytes, 0u);  // every weight resident
      resident_tokens = g.tokens;
      continue;
    }
    EXPECT_EQ(g.tokens, resident_tokens);  // the same tokens, the table read from flash
    // Besides the classifier (in PSRAM here) a token reads one row of the per-layer table: one
    // read, at that token's row.
    const int passes = stats.prefill_passes + stats.decode_passes;
    EXPECT_EQ(session.plan().storage_bytes_per_token(), row);
    EXPECT_EQ(stats.storage_bytes, static_cast<std::uint64_t>(passes) * row);
    ASSERT_EQ(recorded.reads.size(), static_cast<std::size_t>(passes));
    ASSERT_LE(g.tokens.size(), recorded.reads.size());
    for (std::size_t i = 0; i < g.tokens.size(); ++i) {
      EXPECT_EQ(recorded.reads[i].first, table.offset + static_cast<std::uint64_t>(g.tokens[i]) * row) << i;
      EXPECT_EQ(recorded.reads[i].second, row) << i;
    }
  }
}

// 768 values: 24 Q4_0 blocks of 18 bytes, or 3 IQ4_XS super-blocks of 136.
INSTANTIATE_TEST_SUITE_P(Types, PleEsp32Table,
                         ::testing::Values(TableCase{"esp32-ple_q4_0.gguf", TensorType::kQ4_0, 432, false},
                                           TableCase{"esp32-ple_iq4xs.gguf", TensorType::kIQ4_XS, 408, true}),
                         [](const ::testing::TestParamInfo<TableCase>& i) {
                           return std::string(type_name(i.param.table_type));
                         });

TEST(PleEsp32, StreamedWeightsGiveTheResidentTokens) {
  POCKETLM_REQUIRE_FILES("models/tokenizer.bin");
  test::Esp32PleFiles files;
  ASSERT_FALSE(HasFailure());
  FileStorage& file = files.model;
  FileStorage& tokenizer = files.tokenizer;
  std::vector<int> resident;
  // No budget; 2.5 MB: every matrix streamed (ple_proj first, the gates and outputs after each
  // layer's FFN), the tables read row by row.
  for (std::uint64_t budget : {std::uint64_t{0}, std::uint64_t{2500000}}) {
    SCOPED_TRACE(budget);
    SessionOptions options;
    options.seq_len = 64;
    options.budget_bytes = budget;
    options.prefill_batch = 1;  // every pass reads the per-token bytes (a block would read them once)
    Session session;
    const Status st = session.open(file, tokenizer, options);
    ASSERT_TRUE(st.ok()) << st.message();
    const std::int32_t prompt[] = {1, 9038, 2501, 263, 931};
    Generated g;
    GenerateStats stats;
    SamplerParams greedy;
    greedy.temperature = 0.0f;
    ASSERT_TRUE(session.generate(prompt, 5, 40, greedy, record, &g, &stats).ok());
    if (budget == 0) {
      resident = g.tokens;
      continue;
    }
    EXPECT_EQ(g.tokens, resident);
    const ModelSpec& spec = session.spec();
    const WeightPlacement& placement = session.placement();
    EXPECT_EQ(placement.residency(spec.tensor(TensorRole::kPleProj, -1)), Residency::kStreamed);
    EXPECT_EQ(placement.residency(spec.tensor(TensorRole::kPleGate, 5)), Residency::kStreamed);
    EXPECT_EQ(placement.residency(spec.tensor(TensorRole::kPleTable, -1)), Residency::kRowFetched);
    EXPECT_EQ(stats.storage_bytes, static_cast<std::uint64_t>(stats.prefill_passes + stats.decode_passes) *
                                       session.plan().storage_bytes_per_token());
  }
}

TEST(PleEsp32, EveryBackendAndThreadCountGivesReferencesTokens) {
  POCKETLM_REQUIRE_FILES("models/tokenizer.bin");
  test::Esp32PleFiles files;
  ASSERT_FALSE(HasFailure());
  FileStorage& file = files.model;
  FileStorage& tokenizer = files.tokenizer;
  std::vector<int> want;
  for (const std::string& name : test::available_kernel_names()) {
    for (int threads : {1, 2}) {
      SCOPED_TRACE(name + ", " + std::to_string(threads) + " threads");
      std::unique_ptr<ThreadPool> pool;
      if (threads > 1) pool = std::make_unique<ThreadPool>(threads);
      SessionOptions options;
      options.kernels = find_kernels(name.c_str());
      options.parallel = pool.get();
      Session session;
      ASSERT_TRUE(session.open(file, tokenizer, options).ok());
      const std::int32_t prompt[] = {1, 9038, 2501, 263, 931};  // BOS "Once upon a time"
      Generated g;
      SamplerParams greedy;
      greedy.temperature = 0.0f;
      ASSERT_TRUE(session.generate(prompt, 5, 40, greedy, record, &g, nullptr).ok());
      if (want.empty()) want = g.tokens;  // the first backend is reference
      EXPECT_EQ(g.tokens, want);
    }
  }
  EXPECT_EQ(want.size(), 40u);
}

// tests/golden/firmware_runs.json pins the tokens the Cortex-M firmware must give for the ESP32-
// shaped model (scripts/run-firmware-golden); they are the host's, checked here on every backend.
TEST(PleEsp32, TheFirmwareGoldenRunIsTheHostsTokens) {
  POCKETLM_REQUIRE_FILES("models/tokenizer.bin");
  std::ifstream in(POCKETLM_FIRMWARE_RUNS);
  ASSERT_TRUE(in) << POCKETLM_FIRMWARE_RUNS;
  const nlohmann::json runs = nlohmann::json::parse(in);
  const nlohmann::json* run = nullptr;
  for (const nlohmann::json& c : runs)
    if (c["name"] == "esp32ple_iq4xs_greedy") run = &c;
  ASSERT_NE(run, nullptr);
  ASSERT_EQ((*run)["model"], "esp32-ple_iq4xs.gguf");
  test::Esp32PleFiles files("esp32-ple_iq4xs.gguf");
  ASSERT_FALSE(HasFailure());
  const std::string text = (*run)["prompt"].get<std::string>();
  const int steps = (*run)["steps"].get<int>();
  for (const std::string& name : test::available_kernel_names()) {
    SCOPED_TRACE(name);
    SessionOptions options;
    options.kernels = find_kernels(name.c_str());
    Session session;
    ASSERT_TRUE(session.open(files.model, files.tokenizer, options).ok());
    // The ids and the merge's scratch: len + 3 slots of kEncodeWordsPerSlot (as the firmware).
    std::vector<std::int32_t> prompt((text.size() + 3) * Tokenizer::kEncodeWordsPerSlot);
    int n = 0;
    ASSERT_TRUE(session.encode(text.data(), text.size(), prompt.data(), static_cast<int>(prompt.size()), &n).ok());
    EXPECT_EQ(std::vector<int>(prompt.begin(), prompt.begin() + n), (*run)["prompt_tokens"].get<std::vector<int>>());
    std::vector<int> next;
    SamplerParams greedy;
    greedy.temperature = 0.0f;
    ASSERT_TRUE(session.generate(prompt.data(), n, steps, greedy, test::collect_tokens, &next, nullptr).ok());
    EXPECT_EQ(next, (*run)["next_tokens"].get<std::vector<int>>());
  }
}

}  // namespace
}  // namespace pocketlm
