// Per-tensor residency: the planner leaves single tensors in storage, not whole layers or fixed
// families. Row-gather tables go first (one row per token), then matrices largest first, and
// the last piece is the cheapest tensor that covers what is still short; a session under a
// budget streams little more than its shortfall, and the stream reads exactly those tensors.
#include <gtest/gtest.h>

#include <string>

#include "pocketlm/format/architecture.h"
#include "pocketlm/format/model_spec.h"
#include "pocketlm/model/weight_stream.h"
#include "pocketlm/runtime/placement.h"
#include "pocketlm/runtime/session.h"
#include "ports/posix/file_storage.h"
#include "test_support.h"

namespace pocketlm {
namespace {

// A stories260K-shaped spec in f32 (dim 64, hidden_dim 172, 5 layers, 8 heads, 4 kv heads,
// vocab 512), laid out as llama2.c does; `shared` ties the classifier to the embedding table.
ModelSpec small_spec(bool shared) {
  ModelSpec spec;
  spec.config = ModelConfig{64, 172, 5, 8, 4, 512, 512};
  spec.shared_classifier = shared;
  std::uint64_t offset = 28;
  for (int r = 0; r < kTensorRoleCount; ++r) {
    const auto role = static_cast<TensorRole>(r);
    if (!(llama_architecture().roles & role_bit(role)) || (shared && role == TensorRole::kWcls)) continue;
    std::uint64_t rows = 0, cols = 0;
    role_shape(spec.config, role_info(role), &rows, &cols);
    EXPECT_TRUE(spec.add_role(role, TensorType::kF32, 0, rows, cols, offset, &offset));
  }
  spec.file_bytes = offset;
  return spec;
}

// The stored tensors of `p`, as "role.layer" (global: "role") in file order.
std::string stored(const ModelSpec& spec, const WeightPlacement& p) {
  std::string out;
  for (int i = 0; i < spec.tensor_count(); ++i) {
    const TensorInfo t = spec.tensor(i);
    if (!p.in_storage(t)) continue;
    if (!out.empty()) out += ' ';
    out += t.schema->name;
    if (t.layer >= 0) out += "." + std::to_string(t.layer);
  }
  return out;
}

// With the reference kernels (no repacking) streaming costs two read buffers of the largest
// block; the small spec's matrices are each one block: wk and wv 8 KiB, wq and wo 16 KiB, w1 w2
// w3 43 KiB, the table 128 KiB.
TEST(Placement, ASmallShortfallStreamsTheSmallestMatricesThatPayForTheirBuffers) {
  const ModelSpec spec = small_spec(true);
  WeightPlacement p;
  ASSERT_TRUE(shed_weights(spec, reference_kernels(), 1, &p));
  // One 8 KiB matrix frees less than its two 8 KiB buffers: three free one block net. wv is
  // read after wk, the last layer last, so those go first.
  EXPECT_EQ(stored(spec, p), "wk.4 wv.3 wv.4");
  EXPECT_EQ(p.residency(spec.tensor(TensorRole::kWv, 4)), Residency::kStreamed);
  EXPECT_EQ(storage_cost(spec, p).bytes_per_token, 3u * 32 * 64 * 4);
}

TEST(Placement, AnUntiedEmbeddingTableGoesFirstAndCostsOneRow) {
  const ModelSpec spec = small_spec(false);
  WeightPlacement p;
  ASSERT_TRUE(shed_weights(spec, reference_kernels(), 1000, &p));
  EXPECT_EQ(stored(spec, p), "token_embedding");
  EXPECT_EQ(p.residency(spec.tensor(TensorRole::kTokenEmbedding, -1)), Residency::kRowFetched);
  EXPECT_EQ(storage_cost(spec, p).bytes_per_token, 64u * 4);
}

TEST(Placement, LargestFirstThenTheCheapestThatCovers) {
  const ModelSpec spec = small_spec(true);
  const std::uint64_t ffn = 172u * 64 * 4;  // w1, w2, w3 alike
  WeightPlacement p;
  ASSERT_TRUE(shed_weights(spec, reference_kernels(), 2 * ffn + 1, &p));
  // Two FFN matrices would need 43 KiB buffers, so 16 KiB blocks read fewer bytes: seven wq and
  // wo (the last layers first) free 2 x 43 KiB + 1 byte + two 16 KiB buffers but for 6 KiB,
  // which the cheapest matrix that covers it (an 8 KiB wv) adds. Not whole layers.
  EXPECT_EQ(stored(spec, p), "wq.2 wq.3 wq.4 wv.4 wo.1 wo.2 wo.3 wo.4");
  EXPECT_EQ(storage_cost(spec, p).bytes_per_token, 7u * 64 * 64 * 4 + 32u * 64 * 4);
}

TEST(Placement, MoreThanAllWeightsIsTheLeastRamPlacement) {
  const ModelSpec spec = small_spec(true);
  const TensorInfo table = spec.tensor(TensorRole::kTokenEmbedding, -1);
  WeightPlacement p;
  // More than all weights: the placement that needs the least RAM. Every matrix is streamed
  // (43 KiB buffers); norms stay in RAM, and so does the table: read whole as the classifier,
  // its 128 KiB block would raise both buffers by 85 KiB, 170 KiB more for 128 KiB freed.
  ASSERT_TRUE(shed_weights(spec, reference_kernels(), spec.file_bytes, &p));
  std::uint64_t matrices = 0;
  for (int l = 0; l < spec.config.n_layers; ++l) {
    for (const TensorRole r : {TensorRole::kWq, TensorRole::kWk, TensorRole::kWv, TensorRole::kWo, TensorRole::kW1,
                               TensorRole::kW2, TensorRole::kW3}) {
      EXPECT_EQ(p.residency(spec.tensor(r, l)), Residency::kStreamed);
      matrices += spec.tensor(r, l).bytes();
    }
    EXPECT_EQ(p.residency(spec.tensor(TensorRole::kRmsAtt, l)), Residency::kResident);
  }
  EXPECT_EQ(p.residency(table), Residency::kResident);
  EXPECT_EQ(storage_cost(spec, p).bytes_per_token, matrices);
  // Nothing left that frees RAM: the table alone would need more than it frees.
  EXPECT_FALSE(shed_weights(spec, reference_kernels(), 1, &p));
}

// A shared table is the classifier too: once the buffers are its block's size anyway, it is
// row-fetched for the embedding and read whole as the classifier.
TEST(Placement, ASharedTableIsTheClassifierToo) {
  const ModelSpec spec = small_spec(true);
  const TensorInfo table = spec.tensor(TensorRole::kTokenEmbedding, -1);
  WeightPlacement p;
  p.keep_in_storage(table);
  ASSERT_TRUE(shed_weights(spec, reference_kernels(), spec.file_bytes, &p));
  std::uint64_t matrices = 0;
  for (int l = 0; l < spec.config.n_layers; ++l)
    for (const TensorRole r : {TensorRole::kWq, TensorRole::kWk, TensorRole::kWv, TensorRole::kWo, TensorRole::kW1,
                               TensorRole::kW2, TensorRole::kW3})
      matrices += p.in_storage(spec.tensor(r, l)) ? spec.tensor(r, l).bytes() : 0;
  EXPECT_EQ(p.residency(table), Residency::kRowFetched);
  EXPECT_EQ(storage_cost(spec, p).bytes_per_token, matrices + table.bytes() + 64u * 4);
  EXPECT_FALSE(shed_weights(spec, reference_kernels(), 1, &p));  // nothing left to move
}

// The plan under a budget: it streams at least the shortfall of the all-resident plan and less
// than that plus the stream buffers and one more matrix (whole layers would overshoot by up to
// a layer), and the session's stream holds exactly the placement's tensors.
TEST(Placement, ABudgetStreamsLittleMoreThanItsShortfall) {
  POCKETLM_REQUIRE_FILES("models/stories260K_q80.bin", "models/tok512.bin");
  FileStorage model, tokenizer;
  ASSERT_TRUE(model.open(test::model_path("stories260K_q80.bin").c_str(), "model").ok());
  ASSERT_TRUE(tokenizer.open(test::model_path("tok512.bin").c_str(), "tokenizer").ok());
  SessionOptions options;
  options.prefill_batch = 1;
  SessionPlan resident;
  ASSERT_TRUE(plan_session(model, &tokenizer, options, &resident).ok());
  const std::uint64_t need = resident.memory.total();
  for (std::uint64_t cut : {1000u, 60000u, 200000u}) {
    SCOPED_TRACE(cut);
    options.budget_bytes = need - cut;
    SessionPlan planned;
    ASSERT_TRUE(plan_session(model, &tokenizer, options, &planned).ok());
    const MemoryPlan& plan = planned.memory;
    const WeightPlacement& p = planned.placement;
    const ModelSpec& spec = planned.spec;
    ASSERT_TRUE(plan.fits());
    ASSERT_TRUE(p.any());
    std::uint64_t largest = 0;
    for (int i = 0; i < spec.tensor_count(); ++i)
      if (spec.tensor(i).bytes() > largest && spec.tensor(i).rows > 1) largest = spec.tensor(i).bytes();
    const std::uint64_t read = plan.storage_bytes_per_token();
    EXPECT_GE(read, cut);
    EXPECT_LT(read, cut + plan.bytes_of(kStreamRegion) + largest);

    Session s;
    ASSERT_TRUE(s.open(model, tokenizer, options).ok());
    EXPECT_EQ(stored(spec, s.placement()), stored(spec, p));
  }
}

}  // namespace
}  // namespace pocketlm
