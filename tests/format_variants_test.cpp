// The same stories260K weights re-packed as llama2.c v1 (fp32 with header) and as v0 with an
// unshared classifier must generate exactly the golden tokens of the original v0 file.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "pocketlm/format/model_reader.h"
#include "pocketlm/format/llama2c_reader.h"
#include "ports/posix/file_storage.h"
#include "pocketlm/io/memory_storage.h"
#include "pocketlm/runtime/session.h"
#include "golden_models.h"
#include "test_support.h"

namespace pocketlm {
namespace {

using Bytes = std::vector<unsigned char>;


// Greedy tokens after BOS for `steps` positions.
std::vector<int> greedy(const Bytes& model, int steps) {
  MemoryStorage m(model.data(), model.size(), "repacked");
  FileStorage tok;
  EXPECT_TRUE(tok.open(test::model_path("tok512.bin").c_str(), "tokenizer").ok());
  Session s;
  const Status st = s.open(m, tok, SessionOptions{});
  EXPECT_TRUE(st.ok()) << st.message();
  if (!st.ok()) return {};
  const std::int32_t bos = 1;
  std::vector<int> out;
  EXPECT_TRUE(s.generate(&bos, 1, steps, SamplerParams{0.0f, 0.9f, 1}, test::collect_tokens, &out, nullptr).ok());
  return out;
}

// The v0 file's tensors by kind (all layers of a kind are contiguous there).
struct V0 {
  Bytes file;
  ModelSpec spec;
  V0() {
    file = test::read_file(test::model_path("stories260K.bin"));
    MemoryStorage m(file.data(), file.size());
    EXPECT_TRUE(read_model_spec(m, &spec).ok());
  }
  void append(Bytes& out, TensorRole kind) const {
    const int layers = is_per_layer(kind) ? spec.config.n_layers : 1;
    const TensorInfo first = spec.tensor(kind, 0);
    out.insert(out.end(), file.begin() + static_cast<long>(first.offset),
               file.begin() + static_cast<long>(first.offset + first.bytes() * static_cast<std::uint64_t>(layers)));
  }
};

TEST(FormatVariants, V1HeaderFileGivesTheGoldenTokens) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
  V0 v0;
  Bytes v1;
  test::put_i32(v1, static_cast<std::int32_t>(kLlama2cMagic));
  test::put_i32(v1, 1);
  v1.insert(v1.end(), v0.file.begin(), v0.file.begin() + 28);  // the 7 config ints
  v1.push_back(1);                                               // shared classifier
  v1.resize(256, 0);
  using K = TensorRole;
  for (K k : {K::kRmsAtt, K::kRmsFfn, K::kRmsFinal, K::kTokenEmbedding, K::kWq, K::kWk, K::kWv, K::kWo, K::kW1,
              K::kW2, K::kW3})
    v0.append(v1, k);
  const std::vector<int> expected = test::golden_next_tokens("s260K_greedy_noprompt");
  ASSERT_EQ(expected.size(), 200u);
  EXPECT_EQ(greedy(v1, 200), expected);
}

TEST(FormatVariants, UnsharedClassifierV0GivesTheGoldenTokens) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
  V0 v0;
  Bytes unshared = v0.file;
  std::int32_t vocab = 0;
  std::memcpy(&vocab, unshared.data() + 20, 4);
  vocab = -vocab;  // negative vocab_size: a wcls tensor follows
  std::memcpy(unshared.data() + 20, &vocab, 4);
  v0.append(unshared, TensorRole::kTokenEmbedding);
  EXPECT_EQ(greedy(unshared, 200), test::golden_next_tokens("s260K_greedy_noprompt"));

  // A different classifier must change the tokens: wcls is really read.
  Bytes zeroed = unshared;
  std::fill(zeroed.end() - 512 * 64 * 4, zeroed.end(), 0);
  zeroed[zeroed.size() - 512 * 64 * 4 + 3] = 0x3f;  // row 0, column 0 = 0.5
  // One vector for both iterators: begin() of two temporaries would span two allocations.
  const std::vector<int> golden = test::golden_next_tokens("s260K_greedy_noprompt");
  ASSERT_GE(golden.size(), 20u);
  EXPECT_NE(greedy(zeroed, 20), std::vector<int>(golden.begin(), golden.begin() + 20));
}

}  // namespace
}  // namespace pocketlm
