// A second model kind from an architecture row and a kind class alone: "attnonly", a Llama
// decoder without its FFN blocks, with a hyperparameter of its own. It is registered at run
// time (add_model_kind), written as GGUF with its own key prefix, read back through the schema,
// and run by a Session; its logits must be those of a llama file holding the same tensors and
// an FFN whose down projection is zero (x += 0 leaves every bit of the residual as it was).
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "pocketlm/format/gguf.h"
#include "pocketlm/format/gguf_writer.h"
#include "pocketlm/format/model_reader.h"
#include "pocketlm/io/memory_storage.h"
#include "pocketlm/memory/arena.h"
#include "pocketlm/memory/memory_plan.h"
#include "pocketlm/model/decoder.h"
#include "pocketlm/model/model_kind.h"
#include "pocketlm/runtime/session.h"
#include "gguf_convert.h"
#include "golden_models.h"
#include "test_support.h"

namespace pocketlm {
namespace {

using namespace gguf;

// The kind's file: the attention half of llama's roles, its keys under "attnonly.", and one
// hyperparameter of its own (attention.window, into kind_params[0], which it calls window).
constexpr std::uint32_t kAttnRoles = role_bit(TensorRole::kTokenEmbedding) | role_bit(TensorRole::kRmsAtt) |
                                     role_bit(TensorRole::kWq) | role_bit(TensorRole::kWk) | role_bit(TensorRole::kWv) |
                                     role_bit(TensorRole::kWo) | role_bit(TensorRole::kRmsFinal);
const Architecture kAttnOnly = {
    "attnonly",
    {{"embedding_length", ConfigField::kDim, true},
     {"block_count", ConfigField::kLayers, true},
     {"attention.head_count", ConfigField::kHeads, true},
     {"attention.head_count_kv", ConfigField::kKvHeads, false},
     {"context_length", ConfigField::kSeqLen, true},
     {"attention.window", ConfigField::kKindParam0, true}},
    6,
    kAttnRoles | role_bit(TensorRole::kWcls),
    kAttnRoles,
    {"window"},
    {},
    {TensorRole::kTokenEmbedding, TensorRole::kRmsAtt, TensorRole::kWq, TensorRole::kWk, TensorRole::kWv,
     TensorRole::kWo, TensorRole::kRmsFinal, TensorRole::kWcls},
    8,
};

// The kind's file of layers: attention blocks only.
class AttentionOnly final : public Decoder {
 protected:
  void layers(const std::int32_t* /*tokens*/, const TokenRows& r, int pos) override {
    for (int l = 0; l < spec_->config.n_layers; ++l)
      attention_block(ops_, weights_.layer(l), spec_->config, seq_len_, state_, r, l, pos);
  }
};

const ModelKind kAttnOnlyKind = {&kAttnOnly, construct_model<AttentionOnly>};

void register_kind() {
  static const bool added = add_model_kind(&kAttnOnlyKind).ok();
  ASSERT_TRUE(added);
}


struct Tensor {
  std::string name;
  std::uint64_t rows, cols;
};

// Values of a tensor that depend on its name only, so both files hold the same weights.
std::vector<float> values_of(const Tensor& t, bool zero) {
  std::vector<float> v(static_cast<std::size_t>(t.rows * t.cols), 1.0f);
  if (t.rows == 1) return v;  // norm weights
  std::uint32_t seed = 2166136261u;
  for (char c : t.name) seed = (seed ^ static_cast<unsigned char>(c)) * 16777619u;
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> small(-32, 31);
  for (float& x : v) x = zero ? 0.0f : static_cast<float>(small(rng)) / 128.0f;
  return v;
}

const char* const kPieces[8] = {"<unk>", "<s>", "</s>", "\xE2\x96\x81" "a", "\xE2\x96\x81" "b", "a", "b", "\xE2\x96\x81"};

// dim 32, 2 layers, 4 heads (2 kv heads), vocab 8, seq_len 16: "attnonly", or "llama" with an
// FFN (hidden 64) whose ffn_down is zero. `extra` adds one more tensor to the table.
std::vector<unsigned char> model_file(const std::string& arch, const std::string& extra = "") {
  const bool llama = arch == "llama";
  std::vector<Tensor> tensors = {{"token_embd.weight", 8, 32}};
  for (int l = 0; l < 2; ++l) {
    const std::string b = "blk." + std::to_string(l) + ".";
    for (const Tensor& t : {Tensor{"attn_norm.weight", 1, 32}, Tensor{"attn_q.weight", 32, 32},
                            Tensor{"attn_k.weight", 16, 32}, Tensor{"attn_v.weight", 16, 32},
                            Tensor{"attn_output.weight", 32, 32}})
      tensors.push_back({b + t.name, t.rows, t.cols});
    if (llama)
      for (const Tensor& t : {Tensor{"ffn_norm.weight", 1, 32}, Tensor{"ffn_gate.weight", 64, 32},
                              Tensor{"ffn_down.weight", 32, 64}, Tensor{"ffn_up.weight", 64, 32}})
        tensors.push_back({b + t.name, t.rows, t.cols});
  }
  tensors.push_back({"output_norm.weight", 1, 32});
  if (!extra.empty()) tensors.push_back({extra, 64, 32});
  test::VectorSink sink;
  GgufWriter w(sink);
  const auto k = [&arch](const char* suffix) { return arch + "." + suffix; };
  EXPECT_TRUE(w.begin(tensors.size(), 13).ok());
  EXPECT_TRUE(w.kv_string(key::kArchitecture, arch.c_str()).ok());
  EXPECT_TRUE(w.kv_u32(k("context_length").c_str(), 16).ok());
  EXPECT_TRUE(w.kv_u32(k("embedding_length").c_str(), 32).ok());
  EXPECT_TRUE(w.kv_u32(k("block_count").c_str(), 2).ok());
  EXPECT_TRUE(w.kv_u32(k("attention.head_count").c_str(), 4).ok());
  EXPECT_TRUE(w.kv_u32(k("attention.head_count_kv").c_str(), 2).ok());
  EXPECT_TRUE(w.kv_u32(k(llama ? "feed_forward_length" : "attention.window").c_str(), llama ? 64 : 3).ok());
  EXPECT_TRUE(w.kv_f32(k("attention.layer_norm_rms_epsilon").c_str(), 1e-5f).ok());
  EXPECT_TRUE(w.kv_string(key::kTokenizerModel, "llama").ok());
  EXPECT_TRUE(w.kv_array(key::kTokens, kString, 8).ok());
  for (const char* p : kPieces) EXPECT_TRUE(w.array_string(p, std::strlen(p)).ok());
  const float scores[8] = {0, 0, 0, -1, -2, -3, -4, -5};
  EXPECT_TRUE(w.kv_array(key::kScores, kFloat32, 8).ok());
  EXPECT_TRUE(w.array_f32(scores, 8).ok());
  EXPECT_TRUE(w.kv_u32(key::kBosId, 1).ok());
  EXPECT_TRUE(w.kv_u32(key::kEosId, 2).ok());
  std::vector<std::uint64_t> sizes;
  for (const Tensor& t : tensors) {
    std::uint64_t bytes = 0;
    EXPECT_TRUE(w.tensor_info(t.name.c_str(), t.rows, t.cols, kGgmlF32, &bytes).ok()) << t.name;
    sizes.push_back(bytes);
  }
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const std::vector<float> v = values_of(tensors[i], tensors[i].name.find("ffn_down") != std::string::npos);
    EXPECT_TRUE(w.begin_tensor(sizes[i]).ok());
    EXPECT_TRUE(w.tensor_data(v.data(), v.size() * sizeof(float)).ok());
  }
  EXPECT_TRUE(w.finish().ok());
  return sink.bytes();
}

// Logits at positions 0..3 of tokens 1 3 4 5, through the registered kind of the file's
// architecture (the path a Session takes).
std::vector<float> logits_of(const std::vector<unsigned char>& file) { return test::logits_of_file(file, {1, 3, 4, 5}); }

TEST(AddedKind, ItsKeysAndRolesComeFromItsArchitectureRow) {
  register_kind();
  const std::vector<unsigned char> file = model_file("attnonly");
  MemoryStorage storage(file.data(), file.size(), "m.gguf");
  ModelSpec spec;
  const Status st = read_model_spec(storage, &spec);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_STREQ(spec.architecture, "attnonly");
  EXPECT_EQ(spec.config.dim, 32);
  EXPECT_EQ(spec.config.n_kv_heads, 2);
  EXPECT_EQ(spec.config.hidden_dim, 0);
  EXPECT_EQ(spec.config.kind_params[0], 3);  // attnonly.attention.window
  EXPECT_TRUE(spec.has(TensorRole::kWq));
  EXPECT_FALSE(spec.has(TensorRole::kW1));
  EXPECT_TRUE(spec.shared_classifier);
}

TEST(AddedKind, RunsAsLlamaWithAZeroFfn) {
  register_kind();
  const std::vector<float> attn = logits_of(model_file("attnonly"));
  const std::vector<float> llama = logits_of(model_file("llama"));
  ASSERT_EQ(attn.size(), 32u);
  ASSERT_EQ(attn.size(), llama.size());
  EXPECT_EQ(std::memcmp(attn.data(), llama.data(), attn.size() * sizeof(float)), 0);
  bool varied = false;  // the comparison means something only if the logits are not all alike
  for (float v : attn) varied = varied || v != attn[0];
  EXPECT_TRUE(varied);
}

TEST(AddedKind, ASessionOpensAndRunsIt) {
  register_kind();
  std::vector<int> next[2];
  int i = 0;
  for (const char* arch : {"attnonly", "llama"}) {
    const std::vector<unsigned char> file = model_file(arch);
    MemoryStorage model(file.data(), file.size(), "m.gguf");
    Session session;
    const Status st = session.open(model, nullptr, SessionOptions{});
    ASSERT_TRUE(st.ok()) << arch << ": " << st.message();
    const std::int32_t prompt[] = {1, 3, 4};
    SamplerParams params;
    params.temperature = 0.0f;
    ASSERT_TRUE(session.generate(prompt, 3, 16, params, test::collect_tokens, &next[i++], nullptr).ok()) << arch;
  }
  EXPECT_FALSE(next[0].empty());
  EXPECT_EQ(next[0], next[1]);
}

// convert --to gguf is driven by the architecture row and the role table: a q8_0 copy of the
// kind's file keeps its architecture, its own hyperparameter and its tensors, and still runs
// as llama with a zero FFN (a zero row quantizes to zeros).
TEST(AddedKind, ConvertWritesItsOwnArchitecture) {
  register_kind();
  const std::string dir = test::temp_dir();
  std::vector<float> logits[2];
  int i = 0;
  for (const char* arch : {"attnonly", "llama"}) {
    const std::string in = dir + "/" + arch + ".gguf", out = dir + "/" + arch + "-q8_0.gguf";
    test::write_file(in, model_file(arch));
    std::string summary;
    const Status st = cli::convert_to_gguf(cli::GgufConvertOptions{in, "q8_0", "", out}, &summary);
    ASSERT_TRUE(st.ok()) << arch << ": " << st.message();
    const std::vector<unsigned char> q8 = test::read_file(out);
    MemoryStorage storage(q8.data(), q8.size(), "q8.gguf");
    ModelSpec spec;
    ASSERT_TRUE(read_model_spec(storage, &spec).ok());
    EXPECT_STREQ(spec.architecture, arch);
    EXPECT_EQ(spec.type(TensorRole::kWq), TensorType::kQ8_0);
    if (i == 0) EXPECT_EQ(spec.config.kind_params[0], 3);  // attnonly.attention.window
    logits[i++] = logits_of(q8);
  }
  ASSERT_FALSE(logits[0].empty());
  EXPECT_EQ(logits[0], logits[1]);
}

TEST(AddedKind, ATensorOutsideItsRolesIsRefused) {
  register_kind();
  const std::vector<unsigned char> file = model_file("attnonly", "blk.0.ffn_gate.weight");
  MemoryStorage storage(file.data(), file.size(), "m.gguf");
  ModelSpec spec;
  const Status st = read_model_spec(storage, &spec);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(std::string(st.message()).find("GGUF tensor blk.0.ffn_gate.weight is not a tensor of a attnonly model"),
            std::string::npos)
      << st.message();
  // An architecture the build does not run is named with the ones it does.
  ModelSpec other;
  other.architecture = "gemma3n";
  const ModelKind* kind = nullptr;
  const Status unknown = find_model_kind("x.gguf", other, &kind);
  EXPECT_NE(std::string(unknown.message()).find("(pocketlm runs: llama, pocketlm-ple, attnonly)"), std::string::npos)
      << unknown.message();
}

}  // namespace
}  // namespace pocketlm
