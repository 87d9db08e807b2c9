// Batched prefill gives run.c's tokens: a session that runs the prompt in blocks of B tokens
// samples exactly what a one-token-at-a-time session samples, for prompts of 1, 2, B-1, B,
// B+1, 2B+3 and seq_len tokens, on every backend and with 1 or 2 workers; the forced tokens
// reach the callback in order; a BOS inside the prompt ends the run as in run.c; and with
// weights kept in storage one block reads the streamed layers once for all of its tokens.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "golden_models.h"
#include "pocketlm/runtime/session.h"
#include "kernel_test_support.h"
#include "ports/posix/file_storage.h"
#include "ports/posix/thread_pool.h"
#include "test_support.h"

namespace pocketlm {
namespace {


constexpr int kBatch = 8;

struct PrefillRun {
  std::vector<std::pair<int, int>> pairs;  // (prev, next) per callback
  GenerateStats stats;
  int batch = 0;
};

bool collect_pairs(std::int32_t prev, std::int32_t next, void* ctx) {
  static_cast<std::vector<std::pair<int, int>>*>(ctx)->emplace_back(prev, next);
  return true;
}

// A prompt of n tokens: BOS, then ids that are never BOS.
std::vector<std::int32_t> prompt_of(int n) {
  std::vector<std::int32_t> p(static_cast<std::size_t>(n));
  p[0] = 1;
  for (int i = 1; i < n; ++i) p[static_cast<std::size_t>(i)] = 2 + (i * 37) % 400;
  return p;
}

PrefillRun run(const std::string& model_name, const Kernels& kernels, int threads, int batch,
        const std::vector<std::int32_t>& prompt, int steps, int seq_len = 0, std::uint64_t budget = 0,
        float temperature = 0.0f) {
  FileStorage model, tokenizer;
  EXPECT_TRUE(model.open(test::model_path(model_name).c_str(), "model").ok());
  EXPECT_TRUE(tokenizer.open(test::model_path("tok512.bin").c_str(), "tokenizer").ok());
  SessionOptions options;
  options.kernels = &kernels;
  options.prefill_batch = batch;
  options.seq_len = seq_len;
  options.budget_bytes = budget;
  std::unique_ptr<ThreadPool> pool;
  if (threads > 1) pool = std::make_unique<ThreadPool>(threads);
  options.parallel = pool.get();
  Session s;
  const Status st = s.open(model, tokenizer, options);
  EXPECT_TRUE(st.ok()) << st.message();
  PrefillRun r;
  if (!st.ok()) return r;
  r.batch = s.prefill_batch();
  SamplerParams params;
  params.temperature = temperature;
  params.seed = 7;
  const Status gen = s.generate(prompt.data(), static_cast<int>(prompt.size()), steps, params, collect_pairs, &r.pairs,
                                &r.stats);
  EXPECT_TRUE(gen.ok()) << gen.message();
  return r;
}

std::vector<const Kernels*> backends() { return test::available_backends(); }

TEST(Prefill, SameTokensAsOneTokenAtATimeOnEveryBackendAndThreadCount) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/stories260K_q80.bin", "models/tok512.bin");
  for (const char* model : {"stories260K.bin", "stories260K_q80.bin"}) {
    for (const Kernels* k : backends()) {
      for (int threads : {1, 2}) {
        for (int n : {1, 2, kBatch - 1, kBatch, kBatch + 1, 2 * kBatch + 3}) {
          const auto prompt = prompt_of(n);
          const std::string what = std::string(model) + " " + k->name + " threads " + std::to_string(threads) +
                                   " prompt " + std::to_string(n);
          const PrefillRun one = run(model, *k, threads, 1, prompt, n + 12, 0, 0, 0.8f);
          const PrefillRun batched = run(model, *k, threads, kBatch, prompt, n + 12, 0, 0, 0.8f);
          ASSERT_EQ(batched.batch, kBatch) << what;
          EXPECT_EQ(batched.pairs, one.pairs) << what;
          EXPECT_EQ(batched.stats.prefill_passes, n - 1) << what;
          EXPECT_EQ(batched.stats.decode_passes, one.stats.decode_passes) << what;
        }
      }
    }
  }
}

TEST(Prefill, APromptOfExactlySeqLenTokens) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/stories260K_q80.bin", "models/tok512.bin");
  const int seq_len = 40;
  const auto prompt = prompt_of(seq_len);
  for (const char* model : {"stories260K.bin", "stories260K_q80.bin"}) {
    const PrefillRun one = run(model, default_kernels(), 1, 1, prompt, seq_len, seq_len);
    const PrefillRun batched = run(model, default_kernels(), 1, 0, prompt, seq_len, seq_len);
    EXPECT_EQ(batched.batch, 32) << model;  // the plan's choice: the largest power of two <= seq_len
    ASSERT_EQ(one.pairs.size(), static_cast<std::size_t>(seq_len)) << model;
    EXPECT_EQ(batched.pairs, one.pairs) << model;
    // Fewer steps than prompt tokens: every pass is forced.
    const PrefillRun cut_one = run(model, default_kernels(), 1, 1, prompt, 20, seq_len);
    const PrefillRun cut = run(model, default_kernels(), 1, 0, prompt, 20, seq_len);
    EXPECT_EQ(cut.pairs, cut_one.pairs) << model;
    EXPECT_EQ(cut.stats.prefill_passes, 20) << model;
    EXPECT_EQ(cut.stats.decode_passes, 0) << model;
  }
}

TEST(Prefill, ABosInsideThePromptEndsTheRunThere) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
  auto prompt = prompt_of(20);
  prompt[11] = 1;  // run.c: the pass at position 10 has BOS as its next token and the run ends
  const PrefillRun one = run("stories260K.bin", default_kernels(), 1, 1, prompt, 30);
  const PrefillRun batched = run("stories260K.bin", default_kernels(), 1, kBatch, prompt, 30);
  ASSERT_EQ(one.pairs.size(), 11u);
  EXPECT_EQ(batched.pairs, one.pairs);
}

TEST(Prefill, StreamedLayersAreReadOncePerBlock) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
  // 1 MiB: stories260K fp32 keeps its layers and table in storage (tests/streaming_test.cpp).
  // tiled4 on every machine: a backend with attention_batch needs 64 KiB more scratch for the
  // batch, which would move the placement from what this test counts.
  const int n = 41;  // 40 forced passes: 5 blocks of 8
  const auto prompt = prompt_of(n);
  const Kernels& kernels = *find_kernels("tiled4");
  const PrefillRun one = run("stories260K.bin", kernels, 1, 1, prompt, n - 1, 0, 1024 * 1024);
  const PrefillRun batched = run("stories260K.bin", kernels, 1, kBatch, prompt, n - 1, 0, 1024 * 1024);
  EXPECT_EQ(batched.pairs, one.pairs);
  ASSERT_EQ(batched.stats.prefill_passes, n - 1);
  ASSERT_GT(one.stats.prefill_storage_bytes, 0u);
  EXPECT_EQ(one.stats.prefill_storage_bytes, one.stats.storage_bytes);
  // Per prompt token the one-token prefill reads every streamed weight (classifier included);
  // the batched one reads the layers once per block of 8 and no classifier.
  EXPECT_GE(one.stats.prefill_storage_bytes, batched.stats.prefill_storage_bytes * (kBatch / 2))
      << "one token at a time " << one.stats.prefill_storage_bytes << " bytes, in blocks of " << kBatch << " "
      << batched.stats.prefill_storage_bytes;
}

TEST(Prefill, TheBudgetBoundsTheBatch) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
  // Under a budget the plan picks the largest batch that still fits once the weights are placed.
  FileStorage model, tokenizer;
  ASSERT_TRUE(model.open(test::model_path("stories260K.bin").c_str(), "model").ok());
  ASSERT_TRUE(tokenizer.open(test::model_path("tok512.bin").c_str(), "tokenizer").ok());
  SessionOptions options;
  SessionPlan planned;
  const MemoryPlan& plan = planned.memory;
  ASSERT_TRUE(plan_session(model, &tokenizer, options, &planned).ok());
  EXPECT_EQ(planned.prefill_batch, kMaxPrefillBatch);
  EXPECT_GT(plan.bytes_of("prefill batch"), 0u);
  // The batch's bytes: a part per token (activations) and a fixed part (the scores of
  // attention_batch, on backends that have it).
  const std::uint64_t full = plan.bytes_of("prefill batch");
  options.prefill_batch = kMaxPrefillBatch / 2;
  ASSERT_TRUE(plan_session(model, &tokenizer, options, &planned).ok());
  const std::uint64_t per_token = (full - plan.bytes_of("prefill batch")) / (kMaxPrefillBatch / 2);
  const std::uint64_t fixed = full - kMaxPrefillBatch * per_token;
  // Room for about 5 tokens' activations over the one-token plan: 4 (a power of two) fits.
  options.prefill_batch = 1;
  ASSERT_TRUE(plan_session(model, &tokenizer, options, &planned).ok());
  options.prefill_batch = 0;
  options.budget_bytes = plan.total() + fixed + 5 * per_token + 64;
  ASSERT_TRUE(plan_session(model, &tokenizer, options, &planned).ok());
  EXPECT_TRUE(plan.fits());
  EXPECT_EQ(planned.prefill_batch, 4);
}

}  // namespace
}  // namespace pocketlm
