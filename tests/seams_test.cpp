// The seams of the core: the tensor-type table, the reader registry, model kinds, the config
// values a model carries (eps, theta, BOS), the storage read counter, and the session's
// life cycle (open once, never generate after a failed open, a borrowed buffer checked
// against the plan, a plan that refuses regions past its table).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "pocketlm/base/status.h"
#include "pocketlm/format/model_reader.h"
#include "pocketlm/io/counting_storage.h"
#include "pocketlm/io/memory_storage.h"
#include "pocketlm/memory/arena.h"
#include "pocketlm/memory/memory_plan.h"
#include "pocketlm/model/llama.h"
#include "pocketlm/model/model_kind.h"
#include "pocketlm/quant/matrix.h"
#include "pocketlm/runtime/session.h"
#include "ports/posix/file_storage.h"
#include "test_support.h"

namespace pocketlm {
namespace {

bool contains(const Status& st, const std::string& text) {
  return std::string(st.message()).find(text) != std::string::npos;
}

TEST(TensorTypes, ByteSizesComeFromTheTraitsTable) {
  std::uint64_t values = 0, scales = 0;
  ASSERT_TRUE(type_bytes(TensorType::kF32, 10, 0, &values, &scales));
  EXPECT_EQ(values, 40u);
  EXPECT_EQ(scales, 0u);
  ASSERT_TRUE(type_bytes(TensorType::kQ80, 64, 4, &values, &scales));
  EXPECT_EQ(values, 64u);  // one int8 per value
  EXPECT_EQ(scales, 64u);  // one fp32 per group of 4
  EXPECT_FALSE(type_bytes(TensorType::kQ80, 66, 4, &values, &scales));  // not whole groups
  EXPECT_FALSE(type_bytes(TensorType::kQ80, 64, 0, &values, &scales));  // no group size
  EXPECT_FALSE(type_bytes(TensorType::kF32, UINT64_MAX / 2, 0, &values, &scales));  // overflow
  EXPECT_STREQ(type_name(TensorType::kQ80), "q80");
  EXPECT_EQ(row_value_bytes(TensorType::kQ80, 8, 4), 8u);
  EXPECT_EQ(row_scale_bytes(TensorType::kQ80, 8, 4), 8u);
}

TEST(TensorTypes, RowViewsOffsetBothStreams) {
  std::vector<std::int8_t> q(4 * 8);
  std::vector<float> s(4 * 2);
  const Matrix m{TensorType::kQ80, 4, 8, q.data(), s.data(), 4, 1};
  const Matrix v = rows_from(m, 3);
  EXPECT_EQ(v.values, q.data() + 24);
  EXPECT_EQ(v.scales, s.data() + 6);
  EXPECT_EQ(v.rows, 1);
  std::vector<float> f(4 * 8);
  const Matrix mf{TensorType::kF32, 4, 8, f.data(), nullptr, 0, 1};
  EXPECT_EQ(rows_from(mf, 2).values, f.data() + 16);
  EXPECT_EQ(rows_from(mf, 2).scales, nullptr);
}

TEST(Readers, TheRegistryProbesAndReadsLlama2c) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/stories260K_q80.bin", "models/tok512.bin");
  // GGUF is probed by its magic first; llama2.c (no magic in v0) takes the rest, so it is last.
  ASSERT_NE(model_readers()[0].name, nullptr);
  EXPECT_STREQ(model_readers()[0].name, "GGUF");
  ASSERT_NE(model_readers()[1].name, nullptr);
  EXPECT_STREQ(model_readers()[1].name, "llama2.c");
  EXPECT_EQ(model_readers()[2].name, nullptr);
  FileStorage f;
  ASSERT_TRUE(f.open(test::model_path("stories260K_q80.bin").c_str(), "model").ok());
  ModelSpec spec;
  ASSERT_TRUE(read_model_spec(f, &spec).ok());
  EXPECT_EQ(spec.format, ModelFormat::kLlama2cV2);
  EXPECT_STREQ(spec.architecture, "llama");
  EXPECT_EQ(spec.type(TensorRole::kWq), TensorType::kQ80);
  EXPECT_EQ(spec.type(TensorRole::kRmsAtt), TensorType::kF32);
  EXPECT_EQ(spec.tensor(TensorRole::kW2, 4).group, 4);
  EXPECT_STREQ(role_info(TensorRole::kWq).gguf_name, "blk.%d.attn_q.weight");
  EXPECT_STREQ(role_info(TensorRole::kW1).gguf_name, "blk.%d.ffn_gate.weight");
}

TEST(ModelKinds, AnUnknownArchitectureIsNamed) {
  ModelSpec spec;
  spec.architecture = "gemma3n";
  const ModelKind* kind = nullptr;
  const Status st = find_model_kind("model.gguf", spec, &kind);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), StatusCode::kUnsupported);
  EXPECT_TRUE(contains(st, "model.gguf")) << st.message();
  EXPECT_TRUE(contains(st, "'gemma3n'")) << st.message();
  spec.architecture = "llama";
  ASSERT_TRUE(find_model_kind("m", spec, &kind).ok());
  EXPECT_STREQ(kind->architecture->name, "llama");
}

// Logits of two tokens (positions 0 and 1) of stories260K under a possibly edited config.
std::vector<float> logits_with(const ModelConfig& config) {
  FileStorage f;
  EXPECT_TRUE(f.open(test::model_path("stories260K.bin").c_str(), "model").ok());
  ModelSpec spec;
  EXPECT_TRUE(read_model_spec(f, &spec).ok());
  spec.config.rms_eps = config.rms_eps;
  spec.config.rope_theta = config.rope_theta;
  MemoryPlan plan;
  Arena measuring;
  measuring.init_measuring(&plan);
  LlamaModel sizing;
  EXPECT_TRUE(sizing.carve(spec, 16, reference_kernels(), WeightPlacement{}, KvType::kF32, measuring).ok());
  Arena arena;
  EXPECT_TRUE(arena.init_owned(measuring.used()).ok());
  LlamaModel model;
  EXPECT_TRUE(model.carve(spec, 16, reference_kernels(), WeightPlacement{}, KvType::kF32, arena).ok());
  EXPECT_TRUE(model.load(f, 65536, nullptr).ok());
  model.forward(1, 0);
  const float* logits = model.forward(403, 1);
  return std::vector<float>(logits, logits + spec.config.vocab_size);
}

TEST(ModelConfig, EpsAndThetaComeFromTheConfig) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
  const ModelConfig defaults;
  EXPECT_EQ(defaults.rms_eps, 1e-5f);  // run.c's constants
  EXPECT_EQ(defaults.rope_theta, 10000.0f);
  EXPECT_EQ(defaults.bos_id, 1);
  const std::vector<float> base = logits_with(defaults);
  EXPECT_EQ(base, logits_with(defaults));  // deterministic
  ModelConfig eps = defaults;
  eps.rms_eps = 1e-1f;
  EXPECT_NE(base, logits_with(eps));
  ModelConfig theta = defaults;
  theta.rope_theta = 500.0f;
  EXPECT_NE(base, logits_with(theta));
}

TEST(ModelConfig, TheTokenizerUsesTheModelsSpecialIds) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
  FileStorage f;
  ASSERT_TRUE(f.open(test::model_path("tok512.bin").c_str(), "tokenizer").ok());
  std::uint64_t piece_bytes = 0;
  ASSERT_TRUE(Tokenizer::piece_bytes(f, 512, &piece_bytes).ok());
  MemoryPlan plan;
  Arena measuring;
  measuring.init_measuring(&plan);
  Tokenizer sizing;
  ASSERT_TRUE(sizing.carve(512, piece_bytes, measuring).ok());
  Arena arena;
  ASSERT_TRUE(arena.init_owned(measuring.used() + 4096).ok());
  Tokenizer tok;
  ASSERT_TRUE(tok.carve(512, piece_bytes, arena).ok());
  void* chunk = nullptr;
  ASSERT_TRUE(arena.allocate(4096, "chunk", &chunk).ok());
  ASSERT_TRUE(tok.load(f, static_cast<unsigned char*>(chunk), 4096).ok());
  std::int32_t ids[32];
  int n = 0;
  ASSERT_TRUE(tok.encode("", 0, true, true, ids, 32, &n).ok());
  ASSERT_EQ(n, 2);
  EXPECT_EQ(ids[0], 1);
  EXPECT_EQ(ids[1], 2);
  tok.set_special_tokens(7, 9);
  ASSERT_TRUE(tok.encode("", 0, true, true, ids, 32, &n).ok());
  ASSERT_EQ(n, 2);
  EXPECT_EQ(ids[0], 7);
  EXPECT_EQ(ids[1], 9);
}

struct Files {
  FileStorage model, tokenizer;
  explicit Files(const char* model_name) {
    EXPECT_TRUE(model.open(test::model_path(model_name).c_str(), "model").ok());
    EXPECT_TRUE(tokenizer.open(test::model_path("tok512.bin").c_str(), "tokenizer").ok());
  }
};

TEST(SessionReads, TheStorageLayerCountsEveryByteOnce) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/stories260K_q80.bin", "models/tok512.bin");
  for (const char* name : {"stories260K.bin", "stories260K_q80.bin"}) {
    Files f(name);
    CountingStorage outside(&f.model);  // what the session asked of the file, seen from outside
    Session s;
    ASSERT_TRUE(s.open(outside, f.tokenizer, SessionOptions{}).ok());
    std::uint64_t expected = s.spec().header_bytes;
    for (int i = 0; i < s.spec().tensor_count(); ++i) {
      const TensorInfo t = s.spec().tensor(i);
      if (t.role != TensorRole::kFreqCisReal && t.role != TensorRole::kFreqCisImag) expected += t.bytes();
    }
    EXPECT_EQ(s.model_bytes_read(), expected) << name;
    EXPECT_EQ(outside.bytes(), expected) << name;
    EXPECT_EQ(s.model_reads(), outside.reads()) << name;
  }
}

TEST(SessionLifeCycle, OpensOnce) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
  Files f("stories260K.bin");
  Session s;
  ASSERT_TRUE(s.open(f.model, f.tokenizer, SessionOptions{}).ok());
  const std::uint64_t arena = s.arena_bytes();
  const Status again = s.open(f.model, f.tokenizer, SessionOptions{});
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(contains(again, "already")) << again.message();
  EXPECT_EQ(s.arena_bytes(), arena);  // the first session is untouched and still runs
  const std::int32_t prompt[1] = {1};
  SamplerParams greedy;
  greedy.temperature = 0.0f;
  EXPECT_TRUE(s.generate(prompt, 1, 4, greedy, nullptr, nullptr, nullptr).ok());
}

// A storage whose reads fail past a given offset: a file that goes bad after its header.
class FailingStorage final : public Storage {
 public:
  FailingStorage(Storage& inner, std::uint64_t fail_from) : inner_(inner), fail_from_(fail_from) {}
  const char* name() const override { return inner_.name(); }
  std::uint64_t size() const override { return inner_.size(); }
  Status read(std::uint64_t offset, void* dst, std::size_t bytes) override {
    if (offset + bytes > fail_from_) return Status::error(StatusCode::kIoError, "%s: medium error", name());
    return inner_.read(offset, dst, bytes);
  }

 private:
  Storage& inner_;
  std::uint64_t fail_from_;
};

TEST(SessionLifeCycle, NeverGeneratesAfterAFailedLoad) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
  Files f("stories260K.bin");
  FailingStorage bad(f.model, 100000);
  Session s;
  const Status st = s.open(bad, f.tokenizer, SessionOptions{});
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), StatusCode::kIoError);
  EXPECT_FALSE(s.ready());
  const std::int32_t prompt[1] = {1};
  const Status gen = s.generate(prompt, 1, 4, SamplerParams{}, nullptr, nullptr, nullptr);
  ASSERT_FALSE(gen.ok());
  EXPECT_TRUE(contains(gen, "opened successfully")) << gen.message();
}

TEST(SessionLifeCycle, ABorrowedBufferSmallerThanThePlanIsRefusedUpFront) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
  Files f("stories260K.bin");
  SessionPlan plan;
  ASSERT_TRUE(plan_session(f.model, &f.tokenizer, SessionOptions{}, &plan).ok());
  std::vector<unsigned char> buffer(static_cast<std::size_t>(plan.memory.total()) / 2);
  SessionOptions options;
  options.tier_buffers[0] = buffer.data();
  options.tier_buffer_bytes[0] = buffer.size();
  Session s;
  const Status st = s.open(f.model, f.tokenizer, options);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), StatusCode::kOutOfMemory);
  EXPECT_TRUE(contains(st, "buffer for tier ram")) << st.message();
  EXPECT_TRUE(contains(st, "plan needs " + std::to_string(plan.memory.total()) + " there")) << st.message();
}

TEST(MemoryPlanTable, ARegionPastTheTableIsAnErrorNotADrop) {
  MemoryPlan plan;
  for (int i = 0; i < MemoryPlan::kMaxRegions; ++i)
    ASSERT_TRUE(plan.add(("region " + std::to_string(i)).c_str(), 16, "").ok());
  EXPECT_TRUE(plan.add("region 3", 16, "").ok());  // an existing name merges
  const Status st = plan.add("one too many", 16, "");
  ASSERT_FALSE(st.ok());
  EXPECT_TRUE(contains(st, "'one too many'")) << st.message();
  Arena measuring;
  measuring.init_measuring(&plan);
  void* p = nullptr;
  EXPECT_FALSE(measuring.allocate(32, "another", &p).ok());
  EXPECT_EQ(measuring.used(), 0u);  // a refused region is not counted either
}

TEST(StatusMessages, StayValidWhileNewerErrorsAreMade) {
  const Status first = Status::error(StatusCode::kBadFormat, "first: %d", 1);
  for (int i = 0; i < Status::kMessageSlots - 2; ++i) (void)Status::error(StatusCode::kIoError, "later %d", i);
  EXPECT_STREQ(first.message(), "first: 1");
  const Status wrapped = Status::error(first.code(), "model.bin: %s (while loading)", first.message());
  EXPECT_STREQ(wrapped.message(), "model.bin: first: 1 (while loading)");
  EXPECT_STREQ(Status().message(), "");
}

}  // namespace
}  // namespace pocketlm
