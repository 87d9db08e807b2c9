// The byte budget: a stories15M-shaped q80 model fits the PSP's 24 MiB heap at seq_len 256,
// the plan's regions add up to the arena, and over budget is refused before loading.
#include <gtest/gtest.h>

#include "golden_models.h"
#include "ports/posix/file_storage.h"
#include "pocketlm/runtime/session.h"
#include "test_support.h"

namespace pocketlm {
namespace {

constexpr std::uint64_t kPspHeap = 25165824;  // 24 MiB

TEST(PlanBudget, Synth15MQ80FitsTwentyFourMiBAtSeqLen256) {
  POCKETLM_REQUIRE_FILES("models/tokenizer.bin");
  const std::string model_file = test::golden_model_path("synth15M_q80.bin");
  ASSERT_FALSE(model_file.empty());
  FileStorage model, tokenizer;
  ASSERT_TRUE(model.open(model_file.c_str(), "model").ok());
  ASSERT_TRUE(tokenizer.open(test::model_path("tokenizer.bin").c_str(), "tokenizer").ok());
  SessionOptions options;
  options.seq_len = 256;
  options.budget_bytes = kPspHeap;
  Session session;
  const Status st = session.open(model, tokenizer, options);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_TRUE(session.plan().fits());
  EXPECT_LE(session.plan().total(), kPspHeap);
  std::uint64_t sum = 0;
  for (int i = 0; i < session.plan().size(); ++i) sum += session.plan().region(i).bytes;
  EXPECT_EQ(sum, session.plan().total());
  EXPECT_EQ(session.arena_bytes(), session.plan().total());
  // The embedding stays int8: 32000 x 288 bytes plus one fp32 scale per 32 values.
  EXPECT_EQ(session.plan().bytes_of("embedding"), 32000u * 288 + 32000u * 288 / 32 * 4);
}

TEST(PlanBudget, PlanCommandExitsOneOverBudget) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
  const std::string model = test::model_path("stories260K.bin");
  const auto fits = test::run_pocketlm({"plan", model, "-z", test::model_path("tok512.bin"), "--heap", "24MiB"});
  EXPECT_EQ(fits.exit_code, 0) << fits.err;
  EXPECT_NE(fits.out.find("total (arena)"), std::string::npos);
  const auto over = test::run_pocketlm({"plan", model, "-z", test::model_path("tok512.bin"), "--heap", "512K"});
  EXPECT_EQ(over.exit_code, 1);
  EXPECT_NE(over.out.find("OVER BUDGET"), std::string::npos);
}

TEST(PlanBudget, RunOverBudgetPrintsThePlanAndExitsOne) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
  const auto r = test::run_pocketlm({"run", test::model_path("stories260K.bin"), "-z",
                                     test::model_path("tok512.bin"), "--heap", "512KiB", "-n", "8"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "");  // no text: nothing was generated
  EXPECT_NE(r.err.find("kv cache"), std::string::npos);
  EXPECT_NE(r.err.find("budget is 524288 bytes"), std::string::npos) << r.err;
}

// Over budget, the plan's figure is the least memory the model runs in: a budget of exactly
// that fits and one byte less does not (the planner then keeps in storage the tensors that
// free the most RAM net of their stream buffers, not every tensor it can).
TEST(PlanBudget, TheNeedAnOverBudgetPlanGivesIsABudgetThatFits) {
  for (const char* name : {"stories260K.bin", "stories260K_q80.bin"}) {
    SCOPED_TRACE(name);
    POCKETLM_REQUIRE_FILES(std::string("models/") + name, "models/tok512.bin");
    FileStorage model, tokenizer;
    ASSERT_TRUE(model.open(test::model_path(name).c_str(), "model").ok());
    ASSERT_TRUE(tokenizer.open(test::model_path("tok512.bin").c_str(), "tokenizer").ok());
    const auto plan_at = [&](std::uint64_t budget, MemoryPlan* plan) {
      SessionOptions options;
      options.budget_bytes = budget;
      SessionPlan planned;
      const Status st = plan_session(model, &tokenizer, options, &planned);
      ASSERT_TRUE(st.ok()) << st.message();
      *plan = planned.memory;
    };
    MemoryPlan over;
    plan_at(64 * 1024, &over);
    ASSERT_FALSE(over.fits());
    const std::uint64_t need = over.total();
    MemoryPlan at_need, below;
    plan_at(need, &at_need);
    EXPECT_TRUE(at_need.fits()) << need;
    plan_at(need - 1, &below);
    EXPECT_FALSE(below.fits()) << need;
    EXPECT_EQ(below.total(), need);
  }
}

}  // namespace
}  // namespace pocketlm
