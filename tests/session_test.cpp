// Session building: the arena is exactly the plan, the budget is checked before any weight
// byte is read, and every model byte is read exactly once through the Storage interface.
#include <gtest/gtest.h>

#include <vector>

#include "ports/posix/file_storage.h"
#include "pocketlm/memory/arena.h"
#include "pocketlm/runtime/session.h"
#include "test_support.h"

namespace pocketlm {
namespace {

// Wraps a storage and counts how often each byte is read.
class ByteReadCounter final : public Storage {
 public:
  explicit ByteReadCounter(Storage& inner) : inner_(inner), reads_(static_cast<std::size_t>(inner.size()), 0) {}
  const char* name() const override { return inner_.name(); }
  std::uint64_t size() const override { return inner_.size(); }
  Status read(std::uint64_t offset, void* dst, std::size_t bytes) override {
    largest_read_ = bytes > largest_read_ ? bytes : largest_read_;
    for (std::size_t i = 0; i < bytes && offset + i < reads_.size(); ++i) ++reads_[offset + i];
    return inner_.read(offset, dst, bytes);
  }
  const std::vector<int>& reads() const { return reads_; }
  std::size_t largest_read() const { return largest_read_; }

 private:
  Storage& inner_;
  std::vector<int> reads_;
  std::size_t largest_read_ = 0;
};

struct Files {
  FileStorage model, tokenizer;
  explicit Files(const char* model_name) {
    EXPECT_TRUE(model.open(test::model_path(model_name).c_str(), "model").ok());
    EXPECT_TRUE(tokenizer.open(test::model_path("tok512.bin").c_str(), "tokenizer").ok());
  }
};

class SessionTest : public ::testing::TestWithParam<const char*> {};

TEST_P(SessionTest, ArenaIsExactlyThePlan) {
  POCKETLM_REQUIRE_FILES(std::string("models/") + GetParam(), "models/tok512.bin");
  Files f(GetParam());
  Session s;
  ASSERT_TRUE(s.open(f.model, f.tokenizer, SessionOptions{}).ok());
  std::uint64_t sum = 0;
  for (int i = 0; i < s.plan().size(); ++i) sum += s.plan().region(i).bytes;
  EXPECT_EQ(sum, s.plan().total());
  EXPECT_EQ(s.arena_bytes(), s.plan().total());
}

TEST_P(SessionTest, SeqLenShrinksTheKvCache) {
  POCKETLM_REQUIRE_FILES(std::string("models/") + GetParam(), "models/tok512.bin");
  Files f(GetParam());
  SessionOptions small;
  small.seq_len = 64;
  SessionPlan full, small_one;
  ASSERT_TRUE(plan_session(f.model, &f.tokenizer, SessionOptions{}, &full).ok());
  ASSERT_TRUE(plan_session(f.model, &f.tokenizer, small, &small_one).ok());
  const MemoryPlan& full_plan = full.memory;
  const MemoryPlan& small_plan = small_one.memory;
  // 5 layers x kv_dim 32 x 2 (K and V) x 4 bytes per token of context.
  EXPECT_EQ(full_plan.bytes_of("kv cache"), 512u * 5 * 32 * 2 * 4);
  EXPECT_EQ(small_plan.bytes_of("kv cache"), 64u * 5 * 32 * 2 * 4);
}

TEST_P(SessionTest, EveryModelByteIsReadOnceInBoundedChunks) {
  POCKETLM_REQUIRE_FILES(std::string("models/") + GetParam(), "models/tok512.bin");
  Files f(GetParam());
  ByteReadCounter counting(f.model);
  SessionOptions options;
  options.io_chunk_bytes = 4096;
  Session s;
  ASSERT_TRUE(s.open(counting, f.tokenizer, options).ok());
  EXPECT_LE(counting.largest_read(), 4096u);
  // Every header and tensor byte once; only v0's unused freq_cis tables are skipped.
  const ModelSpec& spec = s.spec();
  std::vector<int> expected(counting.reads().size(), 0);
  for (int i = 0; i < spec.tensor_count(); ++i) {
    const TensorInfo t = spec.tensor(i);
    if (t.role == TensorRole::kFreqCisReal || t.role == TensorRole::kFreqCisImag) continue;
    for (std::uint64_t b = t.offset; b < t.offset + t.bytes(); ++b) expected[b] = 1;
  }
  for (std::uint64_t b = 0; b < spec.header_bytes; ++b) expected[b] = 1;
  EXPECT_EQ(counting.reads(), expected);
}

TEST_P(SessionTest, OverBudgetFailsBeforeReadingWeights) {
  POCKETLM_REQUIRE_FILES(std::string("models/") + GetParam(), "models/tok512.bin");
  Files f(GetParam());
  ByteReadCounter counting(f.model);
  SessionOptions options;
  options.budget_bytes = 100000;
  Session s;
  const Status st = s.open(counting, f.tokenizer, options);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), StatusCode::kOutOfMemory);
  EXPECT_FALSE(s.plan().fits());
  std::uint64_t read_bytes = 0;
  for (std::size_t b = 256; b < counting.reads().size(); ++b) read_bytes += static_cast<std::uint64_t>(counting.reads()[b]);
  EXPECT_EQ(read_bytes, 0u);  // nothing past the header
}

TEST_P(SessionTest, BorrowedBufferOfThePlannedSizeIsEnough) {
  POCKETLM_REQUIRE_FILES(std::string("models/") + GetParam(), "models/tok512.bin");
  Files f(GetParam());
  SessionPlan planned;
  ASSERT_TRUE(plan_session(f.model, &f.tokenizer, SessionOptions{}, &planned).ok());
  const MemoryPlan& plan = planned.memory;
  std::vector<unsigned char> buffer(static_cast<std::size_t>(plan.total()) + 16);
  SessionOptions options;
  options.tier_buffers[0] = buffer.data();
  options.tier_buffer_bytes[0] = buffer.size();
  Session s;
  ASSERT_TRUE(s.open(f.model, f.tokenizer, options).ok());
  EXPECT_EQ(s.arena_bytes(), plan.total());
  // One byte less than the plan (after alignment) does not fit.
  SessionOptions tight = options;
  tight.tier_buffer_bytes[0] = static_cast<std::size_t>(plan.total()) - 1;
  Session t;
  EXPECT_FALSE(t.open(f.model, f.tokenizer, tight).ok());
}

// The port's tier allocator: asked once per RAM tier the plan needs, after planning, for the
// tier's bytes and room to align them; its block is borrowed (the arena is exactly the plan), and
// a null answer leaves the tier to the session.
struct TierAllocator {
  std::vector<std::vector<unsigned char>> blocks;
  std::vector<std::pair<int, std::size_t>> calls;
  bool give = true;
  static void* allocate(void* ctx, int tier, std::size_t bytes) {
    auto* self = static_cast<TierAllocator*>(ctx);
    self->calls.emplace_back(tier, bytes);
    if (!self->give) return nullptr;
    self->blocks.emplace_back(bytes);
    return self->blocks.back().data();
  }
};

TEST_P(SessionTest, TierAllocatorGivesTheArenaOnceThePlanIsMade) {
  POCKETLM_REQUIRE_FILES(std::string("models/") + GetParam(), "models/tok512.bin");
  Files f(GetParam());
  SessionPlan planned;
  ASSERT_TRUE(plan_session(f.model, &f.tokenizer, SessionOptions{}, &planned).ok());
  const MemoryPlan& plan = planned.memory;
  for (bool give : {true, false}) {
    SCOPED_TRACE(give ? "the allocator's block" : "the session's own");
    TierAllocator allocator;
    allocator.give = give;
    SessionOptions options;
    options.tier_allocator = TierAllocator::allocate;
    options.tier_allocator_ctx = &allocator;
    Session s;
    ASSERT_TRUE(s.open(f.model, f.tokenizer, options).ok());
    ASSERT_EQ(allocator.calls.size(), 1u);
    EXPECT_EQ(allocator.calls[0].first, 0);
    EXPECT_EQ(allocator.calls[0].second, static_cast<std::size_t>(plan.arena_bytes(0)) + Arena::kAlignment);
    EXPECT_EQ(s.arena_bytes(), plan.total());
    if (give) {  // the arena lies in the allocator's block
      const unsigned char* block = allocator.blocks[0].data();
      EXPECT_GE(s.arena().base(0), block);
      EXPECT_LE(s.arena().base(0) + plan.arena_bytes(0), block + allocator.blocks[0].size());
    }
  }
}

// Planning apart from the session: opened from a plan, the session carves exactly that plan
// (nothing is planned again) and generates what a session that planned for itself does; a plan
// is refused for files of other sizes and when it does not fit.
TEST_P(SessionTest, OpensFromAPlanMadeApart) {
  POCKETLM_REQUIRE_FILES(std::string("models/") + GetParam(), "models/tok512.bin", "models/stories260K_q80.bin");
  Files f(GetParam());
  SessionOptions options;
  options.seq_len = 32;
  SessionPlan plan;
  ASSERT_TRUE(plan_session(f.model, &f.tokenizer, options, &plan).ok());
  Session from_plan, itself;
  ASSERT_TRUE(from_plan.open(plan, f.model, &f.tokenizer, options).ok());
  ASSERT_TRUE(itself.open(f.model, f.tokenizer, options).ok());
  EXPECT_EQ(from_plan.arena_bytes(), plan.memory.total());
  ASSERT_EQ(from_plan.plan().size(), plan.memory.size());
  for (int i = 0; i < plan.memory.size(); ++i) EXPECT_EQ(from_plan.plan().region(i).bytes, plan.memory.region(i).bytes) << i;

  const std::int32_t prompt[1] = {kBosToken};
  SamplerParams params;
  params.temperature = 0.0f;
  std::vector<std::int32_t> a, b;
  const auto collect = [](std::int32_t, std::int32_t next, void* out) {
    static_cast<std::vector<std::int32_t>*>(out)->push_back(next);
    return true;
  };
  ASSERT_TRUE(from_plan.generate(prompt, 1, 16, params, collect, &a, nullptr).ok());
  ASSERT_TRUE(itself.generate(prompt, 1, 16, params, collect, &b, nullptr).ok());
  EXPECT_EQ(a, b);
  EXPECT_FALSE(a.empty());

  // The same plan on another model file: refused, naming the sizes.
  const char* other = std::string(GetParam()) == "stories260K.bin" ? "stories260K_q80.bin" : "stories260K.bin";
  Files g(other);
  Session wrong;
  const Status st = wrong.open(plan, g.model, &g.tokenizer, options);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(st.message()).find("plan them again"), std::string::npos) << st.message();

  // A plan over its budget: refused before anything is read.
  SessionOptions tight = options;
  tight.budget_bytes = 100000;
  SessionPlan over;
  ASSERT_TRUE(plan_session(f.model, &f.tokenizer, tight, &over).ok());
  ASSERT_FALSE(over.memory.fits());
  Session refused;
  EXPECT_EQ(refused.open(over, f.model, &f.tokenizer, tight).code(), StatusCode::kOutOfMemory);
}

INSTANTIATE_TEST_SUITE_P(Models, SessionTest, ::testing::Values("stories260K.bin", "stories260K_q80.bin"),
                         [](const auto& info) {
                           return std::string(info.param).find("q80") == std::string::npos ? "fp32" : "q80";
                         });

// Found by fuzz/fuzz_checkpoint under UBSan: loading a q80 model with a backend that does not
// interleave rows offset a null scratch pointer. Every backend must load it and generate;
// the undefined behaviour itself shows only in sanitizer builds.
TEST(SessionLoad, Q80LoadsWithEveryBackend) {
  POCKETLM_REQUIRE_FILES("models/stories260K_q80.bin", "models/tok512.bin");
  for (const char* const* it = kernel_names(); *it; ++it) {
    const char* name = *it;
    const Kernels* kernels = find_kernels(name);
    if (!kernels) continue;  // not in this build or on this CPU
    Files f("stories260K_q80.bin");
    SessionOptions options;
    options.kernels = kernels;
    options.seq_len = 8;
    Session s;
    const Status st = s.open(f.model, f.tokenizer, options);
    ASSERT_TRUE(st.ok()) << name << ": " << st.message();
    const std::int32_t prompt[1] = {kBosToken};
    SamplerParams params;
    params.temperature = 0.0f;
    EXPECT_TRUE(s.generate(prompt, 1, 4, params, nullptr, nullptr, nullptr).ok()) << name;
  }
}

}  // namespace
}  // namespace pocketlm
