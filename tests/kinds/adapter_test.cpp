// The test-only `adapter` kind (adapter_kind.cpp), from its row, file and blocks alone: its
// file reads by its own key and roles, its rank shapes its tensors, the CLI prints it by name,
// a Session plans its region and prefills a block of tokens as it decodes them one by one, and its logits are llama's when its adapter is zero (x += 0
// leaves every bit) and not when it is not. train_kind_parity checks its arithmetic against
// its trainer module (train/kinds/adapter.py).
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "adapter_kind.h"
#include "cli_common.h"
#include "gguf_convert.h"
#include "pocketlm/format/gguf.h"
#include "pocketlm/format/gguf_writer.h"
#include "pocketlm/format/model_reader.h"
#include "pocketlm/io/memory_storage.h"
#include "pocketlm/runtime/session.h"
#include "golden_models.h"
#include "test_support.h"

namespace pocketlm {
namespace {

constexpr int kRank = 8;

// An F32 GGUF file of `arch` (dim 32, hidden 64, 2 layers, 4 heads, 2 kv heads, vocab 16,
// seq_len 16, rank 8) with every tensor its row requires, values drawn from `seed`; with
// `zero_up` the adapter's up projection is zero. `rank_key` false leaves adapter.rank out.
std::vector<unsigned char> model_file(const char* arch, bool zero_up, bool rank_key = true, std::uint32_t seed = 3) {
  ModelSpec spec;
  spec.architecture = arch;
  spec.config = ModelConfig{32, 64, 2, 4, 2, 16, 16};
  spec.config.kind_params[0] = rank_key ? kRank : 0;
  const Architecture* a = find_architecture(arch);
  EXPECT_NE(a, nullptr);
  std::uint64_t end = 0;
  for (int r = 0; a && r < kTensorRoleCount; ++r) {
    const auto role = static_cast<TensorRole>(r);
    if (!(a->required & role_bit(role))) continue;
    std::uint64_t rows = 0, cols = 0;
    role_shape(spec.config, role_info(*a, role), &rows, &cols);
    if (rows == 0) rows = kRank;  // the rank left out of the file still shapes its tensors
    if (cols == 0) cols = kRank;
    EXPECT_TRUE(spec.add_role(role, TensorType::kF32, 0, rows, cols, 0, &end));
  }
  std::uint32_t types[kTensorRoleCount];
  for (std::uint32_t& t : types) t = gguf::kGgmlF32;
  std::vector<cli::Fallback> fallbacks;
  std::vector<cli::OutTensor> tensors = cli::plan_tensors(spec, types, &fallbacks);
  // 16 pieces (SentencePiece's control and normal types), so that a Session can open it.
  cli::Vocab vocab;
  vocab.pieces = {"<unk>", "<s>", "</s>", "\xE2\x96\x81" "a", "\xE2\x96\x81" "b", "a", "b", "\xE2\x96\x81",
                  "c", "d", "e", "f", "g", "h", "i", "j"};
  for (int i = 0; i < 16; ++i) {
    vocab.scores.push_back(i < 3 ? 0.0f : static_cast<float>(-i));
    vocab.types.push_back(i == 0 ? 2 : i < 3 ? 3 : 1);
  }
  test::VectorSink sink;
  GgufWriter w(sink);
  EXPECT_TRUE(cli::write_gguf_metadata(w, spec, "adapter-test", gguf::kGgmlF32, &vocab, tensors).ok());
  std::uniform_int_distribution<int> small(-32, 31);
  for (const cli::OutTensor& t : tensors) {
    std::vector<float> v(static_cast<std::size_t>(t.source.numel()), 1.0f);  // norms: 1
    // A matrix's values depend on its name and `seed` only, so both kinds share the llama part.
    std::uint32_t h = 2166136261u ^ seed;
    for (char c : t.name) h = (h ^ static_cast<unsigned char>(c)) * 16777619u;
    std::mt19937 rng(h);
    if (t.source.rows > 1)
      for (float& x : v) x = static_cast<float>(small(rng)) / 128.0f;
    if (zero_up && t.source.role == test::kAdapterUp) std::fill(v.begin(), v.end(), 0.0f);
    EXPECT_TRUE(w.begin_tensor(t.bytes).ok());
    EXPECT_TRUE(w.tensor_data(v.data(), v.size() * sizeof(float)).ok());
  }
  EXPECT_TRUE(w.finish().ok());
  return sink.bytes();
}

// Logits at positions 0..3 of tokens 1 3 4 5 (as a Session's model runs them).
std::vector<float> logits_of(const std::vector<unsigned char>& file) { return test::logits_of_file(file, {1, 3, 4, 5}); }

TEST(AdapterKind, ItsFileReadsByItsOwnKeyAndRoles) {
  ASSERT_TRUE(test::kAdapterAdded);
  const std::vector<unsigned char> file = model_file("adapter", false);
  MemoryStorage storage(file.data(), file.size(), "m.gguf");
  ModelSpec spec;
  const Status st = read_model_spec(storage, &spec);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_STREQ(spec.architecture, "adapter");
  EXPECT_EQ(spec.config.kind_params[0], kRank);
  EXPECT_STREQ(spec.role(test::kAdapterDown).name, "adapter_down");
  const TensorInfo down = spec.tensor(test::kAdapterDown, 1), up = spec.tensor(test::kAdapterUp, 1);
  EXPECT_EQ(down.rows, 8u);
  EXPECT_EQ(down.cols, 32u);
  EXPECT_EQ(up.rows, 32u);
  EXPECT_EQ(up.cols, 8u);
  EXPECT_EQ(cli::kind_params_text(spec), ", adapter_rank 8");
}

TEST(AdapterKind, AZeroAdapterIsLlamaAndAnotherIsNot) {
  ASSERT_TRUE(test::kAdapterAdded);
  const std::vector<float> zero = logits_of(model_file("adapter", true));
  const std::vector<float> llama = logits_of(model_file("llama", false));
  const std::vector<float> adapted = logits_of(model_file("adapter", false));
  ASSERT_EQ(zero.size(), 64u);
  ASSERT_EQ(llama.size(), zero.size());
  ASSERT_EQ(adapted.size(), zero.size());
  EXPECT_EQ(std::memcmp(zero.data(), llama.data(), zero.size() * sizeof(float)), 0);
  EXPECT_NE(std::memcmp(adapted.data(), llama.data(), zero.size() * sizeof(float)), 0);
}

TEST(AdapterKind, ASessionPlansItsRegionAndPrefillsAsItDecodes) {
  ASSERT_TRUE(test::kAdapterAdded);
  const std::vector<unsigned char> file = model_file("adapter", false);
  std::vector<int> tokens[2];
  int i = 0;
  for (int batch : {1, 4}) {
    MemoryStorage model(file.data(), file.size(), "m.gguf");
    Session session;
    SessionOptions options;
    options.prefill_batch = batch;
    const Status st = session.open(model, nullptr, options);
    ASSERT_TRUE(st.ok()) << st.message();
    // Its two matrices of 2 layers, f32: (8 x 32 + 32 x 8) x 4 bytes x 2.
    EXPECT_EQ(session.plan().bytes_of("adapter weights"), 4096u);
    const std::int32_t prompt[] = {1, 3, 4, 5, 6, 7};
    SamplerParams params;
    params.temperature = 0.0f;
    ASSERT_TRUE(session.generate(prompt, 6, 14, params, test::collect_tokens, &tokens[i++], nullptr).ok());
  }
  EXPECT_FALSE(tokens[0].empty());
  EXPECT_EQ(tokens[0], tokens[1]);
}

TEST(AdapterKind, AFileWithoutItsRankIsOneLineNamingTheKey) {
  ASSERT_TRUE(test::kAdapterAdded);
  const std::vector<unsigned char> file = model_file("adapter", false, /*rank_key=*/false);
  MemoryStorage storage(file.data(), file.size(), "m.gguf");
  ModelSpec spec;
  const Status st = read_model_spec(storage, &spec);
  ASSERT_FALSE(st.ok());
  EXPECT_STREQ(st.message(), "m.gguf: GGUF key adapter.adapter.rank is missing (a adapter model needs it)");
}

}  // namespace
}  // namespace pocketlm
