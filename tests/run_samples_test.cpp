// `pocketlm run --samples N`: N independent samples in one process, sample k exactly what
// `run -s S+k` prints alone, separated by lines holding only <|endoftext|> (the training text's
// format, which train/distill.py reads); bad counts and seeds that would wrap are refused.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "test_support.h"

namespace pocketlm {
namespace {

std::vector<std::string> base() {
  return {"run", test::model_path("stories260K.bin"), "-z", test::model_path("tok512.bin"), "-t", "1", "-p", "0.9",
          "-n", "64"};
}

test::CommandResult run_with(std::vector<std::string> extra) {
  std::vector<std::string> args = base();
  args.insert(args.end(), extra.begin(), extra.end());
  return test::run_pocketlm(args);
}

TEST(RunSamples, EachSampleIsTheRunOfItsOwnSeed) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
  const test::CommandResult all = run_with({"-s", "40", "--samples", "3"});
  ASSERT_EQ(all.exit_code, 0) << all.err;
  std::string expected;
  for (int k = 0; k < 3; ++k) {
    const test::CommandResult one = run_with({"-s", std::to_string(40 + k)});
    ASSERT_EQ(one.exit_code, 0) << one.err;
    // Each alone ends with a newline; joined, a separator line stands between them.
    expected += k == 0 ? one.out.substr(0, one.out.size() - 1) : "\n<|endoftext|>\n" + one.out.substr(0, one.out.size() - 1);
  }
  EXPECT_EQ(all.out, expected + "\n");
  EXPECT_NE(all.err.find("generated"), std::string::npos) << all.err;
}

TEST(RunSamples, BadCountsAndWrappingSeedsAreOneLineErrors) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
  for (const auto& [extra, needle] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"--samples", "0"}, "--samples: 0 samples; 1 or more"},
           {{"-s", "-1", "--samples", "2"}, "would wrap the 64-bit seed to 0"},
           {{"--samples", "2", "--token-log", "/tmp/x.log"}, "--token-log: logs one sample's ids"}}) {
    const test::CommandResult r = run_with(extra);
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_NE(r.err.find(needle), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;  // one line
    EXPECT_TRUE(r.out.empty());
  }
}

}  // namespace
}  // namespace pocketlm
