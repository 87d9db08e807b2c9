// Worker threads split matmul rows and attention heads; every row and head is computed by
// the same code whatever the split, so the tokens must be identical for any thread count.
#include <gtest/gtest.h>

#include <memory>

#include <vector>

#include "golden_models.h"
#include "ports/posix/file_storage.h"
#include "pocketlm/model/row_split.h"
#include "pocketlm/runtime/session.h"
#include "ports/posix/thread_pool.h"
#include "test_support.h"

namespace pocketlm {
namespace {

TEST(ThreadPool, RunsEveryTaskOnceForManyJobs) {
  ThreadPool pool(3);
  EXPECT_EQ(pool.workers(), 3);
  std::vector<int> hits(97, 0);
  for (int job = 0; job < 2000; ++job) {
    const int n = 1 + job % 97;
    pool.run(n, [](void* ctx, int i) { ++(*static_cast<std::vector<int>*>(ctx))[static_cast<std::size_t>(i)]; },
             &hits);
  }
  int total = 0;
  for (int h : hits) total += h;
  int expected = 0;
  for (int job = 0; job < 2000; ++job) expected += 1 + job % 97;
  EXPECT_EQ(total, expected);
}

// Every row of every op lands in exactly one task, and each task starts on a multiple of 32
// rows (a backend's interleaved blocks stay whole).
TEST(RowSplit, CoversEveryRowOnceInAlignedTasks) {
  const int shapes[][3] = {{2048, 256, 256}, {5632, 5632, 0}, {32000, 0, 0}, {1000, 0, 0}, {288, 768, 96},
                           {33, 0, 0},       {511, 1, 64},   {1024, 0, 0}};
  for (const auto& shape : shapes) {
    const int count = shape[2] ? 3 : shape[1] ? 2 : 1;
    for (int workers : {1, 2, 3, 4}) {
      for (int per_worker : {1, 4}) {
        const RowSplit split(shape, count, workers, per_worker);
        std::vector<std::vector<int>> hits(3);
        for (int i = 0; i < count; ++i) hits[i].assign(static_cast<std::size_t>(shape[i]), 0);
        for (int task = 0; task < split.tasks; ++task) {
          int op = -1, r0 = 0, r1 = 0;
          split.locate(task, shape, &op, &r0, &r1);
          ASSERT_GE(op, 0);
          ASSERT_LT(op, count);
          EXPECT_EQ(r0 % RowSplit::kRowAlign, 0) << "task " << task << " of op " << op;
          EXPECT_LT(r0, r1);
          for (int r = r0; r < r1; ++r) ++hits[op][static_cast<std::size_t>(r)];
        }
        for (int i = 0; i < count; ++i)
          for (int h : hits[i]) ASSERT_EQ(h, 1) << "op " << i << " rows " << shape[i] << " workers " << workers;
        // Decode's split: one long run of rows per worker.
        if (per_worker == 1 && shape[0] >= 1024) EXPECT_EQ(split.blocks[0], workers);
      }
    }
  }
}

struct Case {
  const char* name;   // golden case
  const char* model;  // golden model name
  const char* tokenizer;
};


class ThreadsTest : public ::testing::TestWithParam<std::tuple<Case, int>> {};

TEST_P(ThreadsTest, GreedyTokensMatchTheGoldenRun) {
  const auto& [c, threads] = GetParam();
  if (const std::string why = test::golden_inputs_missing(c.model, c.tokenizer); !why.empty()) GTEST_SKIP() << why;
  const std::string path = test::golden_model_path(c.model);
  ASSERT_FALSE(path.empty());
  FileStorage model, tokenizer;
  ASSERT_TRUE(model.open(path.c_str(), "model").ok());
  ASSERT_TRUE(tokenizer.open(test::model_path(c.tokenizer).c_str(), "tokenizer").ok());
  SessionOptions options;
  // The pool is made once, before the session: not per token.
  std::unique_ptr<ThreadPool> pool;
  if (threads > 1) pool = std::make_unique<ThreadPool>(threads);
  options.parallel = pool.get();
  Session session;
  ASSERT_TRUE(session.open(model, tokenizer, options).ok());
  EXPECT_EQ(session.threads(), threads);
  const std::vector<int> expected = test::golden_next_tokens(c.name);
  ASSERT_FALSE(expected.empty());
  std::vector<std::int32_t> prompt(256);
  int n = 0;
  const char* text = "Once upon a time";
  ASSERT_TRUE(session.encode(text, 16, prompt.data(), prompt.size(), &n).ok());
  std::vector<int> got;
  ASSERT_TRUE(session
                  .generate(prompt.data(), n, static_cast<int>(expected.size()), SamplerParams{0.0f, 0.9f, 1}, test::collect_tokens,
                            &got, nullptr)
                  .ok());
  EXPECT_EQ(got, expected);
}

INSTANTIATE_TEST_SUITE_P(
    GoldenGreedy, ThreadsTest,
    ::testing::Combine(::testing::Values(Case{"synth15Mq80_greedy", "synth15M_q80.bin", "tokenizer.bin"},
                                         Case{"synth15M_greedy", "synth15M.bin", "tokenizer.bin"}),
                       ::testing::Values(1, 2, 3)),
    [](const auto& info) {
      return std::string(std::get<0>(info.param).name) + "_threads" + std::to_string(std::get<1>(info.param));
    });

}  // namespace
}  // namespace pocketlm
