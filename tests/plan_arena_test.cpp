// `plan` is the product's promise: with run's flags it prints exactly the arena `run`
// allocates, for every kernel backend this machine has (the backends repack weights and need
// different scratch), for fp32 and q80, for a shortened context and for several threads.
#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <vector>

#include "pocketlm/kernels/kernels.h"
#include "test_support.h"

namespace pocketlm::test {
namespace {

// The number in `pattern`'s first group, or -1.
long long find_number(const std::string& text, const std::string& pattern) {
  std::smatch m;
  return std::regex_search(text, m, std::regex(pattern)) ? std::stoll(m[1].str()) : -1;
}

struct Variant {
  const char* model;
  std::vector<std::string> flags;
};

TEST(PlanArena, PlanTotalIsRunsArenaForEveryBackend) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/stories260K_q80.bin", "models/tok512.bin");
  const std::vector<Variant> variants = {
      {"stories260K.bin", {}},
      {"stories260K_q80.bin", {}},
      {"stories260K.bin", {"--seq-len", "100", "--threads", "2"}},
      {"stories260K_q80.bin", {"--seq-len", "64"}},
  };
  int backends = 0;
  for (const char* const* name = kernel_names(); *name; ++name) {
    if (!find_kernels(*name)) continue;  // compiled in, but this CPU lacks it
    ++backends;
    for (const Variant& v : variants) {
      std::vector<std::string> common = {model_path(v.model), "-z", model_path("tok512.bin"), "--kernels", *name};
      common.insert(common.end(), v.flags.begin(), v.flags.end());
      SCOPED_TRACE(std::string(*name) + " " + v.model + (v.flags.empty() ? "" : " " + v.flags[0]));
      std::vector<std::string> plan_args = {"plan"}, run_args = {"run"};
      plan_args.insert(plan_args.end(), common.begin(), common.end());
      run_args.insert(run_args.end(), common.begin(), common.end());
      run_args.insert(run_args.end(), {"-n", "2", "-s", "1"});
      const CommandResult plan = run_pocketlm(plan_args), run = run_pocketlm(run_args);
      ASSERT_EQ(plan.exit_code, 0) << plan.err;
      ASSERT_EQ(run.exit_code, 0) << run.err;
      const long long planned = find_number(plan.out, "total \\(arena\\) *\\| *([0-9]+) ");
      const long long used = find_number(run.err, ", arena ([0-9]+) bytes, kernels " + std::string(*name) + ",");
      ASSERT_GT(planned, 0) << plan.out;
      EXPECT_EQ(planned, used) << plan.out << run.err;
      EXPECT_NE(plan.out.find("kernels " + std::string(*name)), std::string::npos) << plan.out;
    }
  }
  EXPECT_GE(backends, 2);  // reference and tiled4 are always there
}

TEST(PlanArena, PlanNeedsTheTokenizerAsRunDoes) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin");
  // Without -z, plan reads ./tokenizer.bin as run does; a missing one is the same error.
  const std::string missing = temp_dir() + "/no-tokenizer.bin";
  const CommandResult r = run_pocketlm({"plan", model_path("stories260K.bin"), "-z", missing});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find(missing), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("tokenizer"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
}

TEST(PlanArena, UnknownBackendListsTheAvailableOnes) {
  const CommandResult r =
      run_pocketlm({"plan", model_path("stories260K.bin"), "-z", model_path("tok512.bin"), "--kernels", "foo"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("'foo'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("available: reference, tiled4"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace pocketlm::test
