// Weights kept in storage: a session under a budget its weights do not fit streams what does
// not fit, reads exactly the plan's bytes per token (counted by the storage layer), and
// produces the tokens of a fully resident session; a resident session reads nothing per token.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "golden_models.h"
#include "pocketlm/io/counting_storage.h"
#include "pocketlm/runtime/session.h"
#include "ports/posix/file_storage.h"
#include "ports/posix/thread_pool.h"
#include "ports/posix/thread_read_queue.h"
#include "test_support.h"

namespace pocketlm {
namespace {

struct StreamRun {
  std::vector<int> tokens;
  GenerateStats stats;
  std::uint64_t plan_bytes_per_token = 0;
  std::uint64_t outside_bytes = 0;  // what the file gave, seen from outside the session
  WeightPlacement placement;
};

StreamRun run_model(const char* model_name, std::uint64_t budget, int threads = 1, bool thread_reads = false) {
  FileStorage model, tokenizer;
  EXPECT_TRUE(model.open(test::model_path(model_name).c_str(), "model").ok());
  EXPECT_TRUE(tokenizer.open(test::model_path("tok512.bin").c_str(), "tokenizer").ok());
  CountingStorage outside(&model);
  SessionOptions options;
  options.budget_bytes = budget;
  std::unique_ptr<ThreadPool> pool;
  if (threads > 1) pool = std::make_unique<ThreadPool>(threads);
  options.parallel = pool.get();
  ThreadReadQueue queue;
  if (thread_reads) options.read_queue = &queue;
  Session s;
  const Status st = s.open(outside, tokenizer, options);
  EXPECT_TRUE(st.ok()) << st.message();
  StreamRun r;
  if (!st.ok()) return r;
  r.plan_bytes_per_token = s.plan().storage_bytes_per_token();
  r.placement = s.placement();
  const std::uint64_t after_open = outside.bytes();
  const std::int32_t bos[1] = {kBosToken};
  SamplerParams greedy;
  greedy.temperature = 0.0f;
  const Status gen = s.generate(bos, 1, 40, greedy, test::collect_tokens, &r.tokens, &r.stats);
  EXPECT_TRUE(gen.ok()) << gen.message();
  r.outside_bytes = outside.bytes() - after_open;
  return r;
}

TEST(Streaming, AResidentSessionReadsNothingPerToken) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
  const StreamRun r = run_model("stories260K.bin", 0);
  EXPECT_FALSE(r.placement.any());
  EXPECT_EQ(r.plan_bytes_per_token, 0u);
  EXPECT_EQ(r.stats.storage_bytes, 0u);
  EXPECT_EQ(r.stats.storage_reads, 0u);
  EXPECT_EQ(r.outside_bytes, 0u);
}

TEST(Streaming, ReadsThePlansBytesPerTokenAndGivesTheSameTokens) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/stories260K_q80.bin", "models/tok512.bin");
  for (const char* name : {"stories260K.bin", "stories260K_q80.bin"}) {
    const StreamRun resident = run_model(name, 0);
    // 1 MiB: the fp32 model streams its layers and table; the q80 one (about 0.5 MiB of
    // weights at seq_len 512) a part of them.
    const StreamRun streamed = run_model(name, 1024 * 1024);
    ASSERT_TRUE(streamed.placement.any()) << name;
    EXPECT_EQ(streamed.tokens, resident.tokens) << name;
    const int passes = streamed.stats.prefill_passes + streamed.stats.decode_passes;
    ASSERT_GT(passes, 0);
    EXPECT_GT(streamed.plan_bytes_per_token, 0u);
    EXPECT_EQ(streamed.stats.storage_bytes, streamed.plan_bytes_per_token * static_cast<std::uint64_t>(passes))
        << name;
    EXPECT_EQ(streamed.outside_bytes, streamed.stats.storage_bytes) << name;
  }
}

TEST(Streaming, WorkersAndAReadThreadChangeNoToken) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
  const StreamRun resident = run_model("stories260K.bin", 0);
  const StreamRun both = run_model("stories260K.bin", 1024 * 1024, 2, true);
  EXPECT_EQ(both.tokens, resident.tokens);
  const int passes = both.stats.prefill_passes + both.stats.decode_passes;
  EXPECT_EQ(both.stats.storage_bytes, both.plan_bytes_per_token * static_cast<std::uint64_t>(passes));
}

// A file that goes bad after loading: the next read of a streamed block fails.
class FailAfter final : public Storage {
 public:
  FailAfter(Storage& inner, std::uint64_t budget) : inner_(inner), left_(budget) {}
  const char* name() const override { return inner_.name(); }
  std::uint64_t size() const override { return inner_.size(); }
  Status read(std::uint64_t offset, void* dst, std::size_t bytes) override {
    if (bytes > left_) return Status::error(StatusCode::kIoError, "%s: read failed at offset %llu", name(),
                                            static_cast<unsigned long long>(offset));
    left_ -= bytes;
    return inner_.read(offset, dst, bytes);
  }

 private:
  Storage& inner_;
  std::uint64_t left_;
};

TEST(Streaming, AReadErrorMidTokenStopsGeneration) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
  FileStorage model, tokenizer;
  ASSERT_TRUE(model.open(test::model_path("stories260K.bin").c_str(), "model").ok());
  ASSERT_TRUE(tokenizer.open(test::model_path("tok512.bin").c_str(), "tokenizer").ok());
  FailAfter failing(model, 300000);  // the header and resident norms load; streaming then fails
  SessionOptions options;
  options.budget_bytes = 1024 * 1024;
  Session s;
  ASSERT_TRUE(s.open(failing, tokenizer, options).ok());
  const std::int32_t bos[1] = {kBosToken};
  std::vector<int> tokens;
  const Status st = s.generate(bos, 1, 40, SamplerParams{0.0f, 0.9f, 1}, test::collect_tokens, &tokens, nullptr);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), StatusCode::kIoError);
  EXPECT_NE(std::string(st.message()).find("read failed"), std::string::npos) << st.message();
  EXPECT_LT(tokens.size(), 40u);
}

}  // namespace
}  // namespace pocketlm
