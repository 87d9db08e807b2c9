// After a session is built, generating text allocates nothing: every operator new and every
// malloc/calloc/realloc made by the engine library is counted while generate() runs.
#include <gtest/gtest.h>

#include <memory>

#include <atomic>
#include <cstdlib>
#include <new>
#include <vector>

#include "ports/posix/file_storage.h"
#include "ports/posix/thread_pool.h"
#include "pocketlm/runtime/session.h"
#include "test_support.h"

namespace {
std::atomic<long> g_allocations{0};
std::atomic<bool> g_counting{false};
void note() {
  if (g_counting.load(std::memory_order_relaxed)) g_allocations.fetch_add(1, std::memory_order_relaxed);
}
}  // namespace

// The engine is linked statically with -Wl,--wrap for these (tests/CMakeLists.txt).
extern "C" {
void* __real_malloc(std::size_t);
void* __real_calloc(std::size_t, std::size_t);
void* __real_realloc(void*, std::size_t);
void* __wrap_malloc(std::size_t n) { note(); return __real_malloc(n); }
void* __wrap_calloc(std::size_t n, std::size_t m) { note(); return __real_calloc(n, m); }
void* __wrap_realloc(void* p, std::size_t n) { note(); return __real_realloc(p, n); }
}

void* operator new(std::size_t n) {
  note();
  if (void* p = __real_malloc(n ? n : 1)) return p;  // counted once, here
  throw std::bad_alloc();
}
void* operator new[](std::size_t n) { return operator new(n); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }

namespace pocketlm {
namespace {

bool count_tokens(std::int32_t, std::int32_t, void* ctx) {
  ++*static_cast<int*>(ctx);
  return true;
}

class AllocCount : public ::testing::TestWithParam<std::tuple<const char*, int>> {};

TEST_P(AllocCount, GenerateMakesNoHeapAllocations) {
  const auto& [model_name, threads] = GetParam();
  POCKETLM_REQUIRE_FILES(std::string("models/") + model_name, "models/tok512.bin");
  FileStorage model, tokenizer;
  ASSERT_TRUE(model.open(test::model_path(model_name).c_str(), "model").ok());
  ASSERT_TRUE(tokenizer.open(test::model_path("tok512.bin").c_str(), "tokenizer").ok());
  Session session;
  SessionOptions options;
  // The pool is made once, before the session: not per token.
  std::unique_ptr<ThreadPool> pool;
  if (threads > 1) pool = std::make_unique<ThreadPool>(threads);
  options.parallel = pool.get();
  ASSERT_TRUE(session.open(model, tokenizer, options).ok());
  std::vector<std::int32_t> prompt(256);
  int n = 0;
  ASSERT_TRUE(session.encode("Once upon a time", 16, prompt.data(), prompt.size(), &n).ok());

  // The counter itself is proven live: an allocation while counting is seen.
  g_allocations = 0;
  g_counting = true;
  ::operator delete(::operator new(16));  // a direct call, which the compiler may not elide
  g_counting = false;
  ASSERT_EQ(g_allocations.load(), 1);

  for (const SamplerParams& params : {SamplerParams{0.0f, 0.9f, 1}, SamplerParams{1.0f, 0.9f, 7},
                                      SamplerParams{0.8f, 0.0f, 42}}) {
    int tokens = 0;
    GenerateStats stats;
    g_allocations = 0;
    g_counting = true;
    const Status st = session.generate(prompt.data(), n, 200, params, count_tokens, &tokens, &stats);
    g_counting = false;
    ASSERT_TRUE(st.ok()) << st.message();
    EXPECT_GT(tokens, 10);
    EXPECT_EQ(g_allocations.load(), 0) << "temperature " << params.temperature;
  }
}

// A chat with the context-full policy (seq_len 64: turns dropped, kept ones re-prefilled)
// allocates nothing either once the session is built.
TEST_P(AllocCount, ChatTurnsMakeNoHeapAllocations) {
  const auto& [model_name, threads] = GetParam();
  POCKETLM_REQUIRE_FILES(std::string("models/") + model_name, "models/tok512.bin");
  FileStorage model, tokenizer;
  ASSERT_TRUE(model.open(test::model_path(model_name).c_str(), "model").ok());
  ASSERT_TRUE(tokenizer.open(test::model_path("tok512.bin").c_str(), "tokenizer").ok());
  std::unique_ptr<ThreadPool> pool;
  if (threads > 1) pool = std::make_unique<ThreadPool>(threads);
  Session session;
  SessionOptions options;
  options.parallel = pool.get();
  options.chat = true;
  options.seq_len = 64;
  ASSERT_TRUE(session.open(model, tokenizer, options).ok());
  std::vector<std::int32_t> message(256);
  int n = 0;
  ASSERT_TRUE(session.tokenizer().encode("Then the dog ran", 16, false, false, message.data(), message.size(), &n).ok());
  ASSERT_TRUE(session.chat_begin(SamplerParams{0.8f, 0.9f, 42}).ok());
  int tokens = 0;
  bool policy = false;
  g_allocations = 0;
  g_counting = true;
  for (int turn = 0; turn < 8; ++turn) {
    ChatTurnStats stats;
    const Status st = session.chat_turn(message.data(), n, 8, count_tokens, &tokens, &stats);
    if (!st.ok()) break;
    policy |= stats.context_full;
  }
  g_counting = false;
  EXPECT_EQ(g_allocations.load(), 0);
  EXPECT_TRUE(policy);
  EXPECT_GT(tokens, 20);
}

INSTANTIATE_TEST_SUITE_P(Models, AllocCount,
                         ::testing::Combine(::testing::Values("stories260K.bin", "stories260K_q80.bin"),
                                            ::testing::Values(1, 2)),
                         [](const auto& info) {
                           const std::string model = std::get<0>(info.param);
                           return std::string(model.find("q80") == std::string::npos ? "fp32" : "q80") + "_threads" +
                                  std::to_string(std::get<1>(info.param));
                         });

}  // namespace
}  // namespace pocketlm
