// A command whose stdout cannot be written (a full disk, a quota; /dev/full here) fails: exit
// 1 and one line naming stdout and the reason (apps/pocketlm/std_streams.h), never exit 0 with
// the text lost. run stops generating at the first failed write.
#include <sys/wait.h>

#include <cstdlib>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "test_support.h"

namespace pocketlm::test {
namespace {

// A short text for eval to score.
std::string tok_text() {
  const std::string path = temp_dir() + "/story.txt";
  write_file(path, std::vector<unsigned char>{'O', 'n', 'c', 'e', ' ', 'u', 'p', 'o', 'n', ' ', 'a', ' ', 't', 'i', 'm',
                                              'e', '.', '\n'});
  return path;
}

struct Result {
  int exit_code;
  std::string err;
};

// pocketlm ARGS > /dev/full, stderr kept.
Result run_into_dev_full(const std::vector<std::string>& args) {
  const std::string err = temp_dir() + "/stderr";
  std::string cmd = "exec " + emulator_prefix() + "'" + pocketlm_binary() + "'";
  for (const std::string& a : args) cmd += " '" + a + "'";
  cmd += " >/dev/full 2>'" + err + "'";
  const int status = std::system(cmd.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, read_text(err)};
}

TEST(StdStreams, EveryCommandFailsWhenStdoutIsFull) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
  const std::string model = model_path("stories260K.bin"), tok = model_path("tok512.bin");
  const std::vector<std::vector<std::string>> commands = {
      {"run", model, "-z", tok, "-n", "16", "-t", "0"},
      {"run", model, "-z", tok, "-n", "64", "--samples", "50"},
      {"plan", model, "-z", tok},
      {"plan", model, "-z", tok, "--json"},
      {"devices"},
      {"inspect", model},
      {"eval", model, tok_text(), "-z", tok},
      {"--version"},
      {"help", "run"},
  };
  for (const auto& args : commands) {
    std::string shown;
    for (const std::string& a : args) shown += " " + a;
    SCOPED_TRACE("pocketlm" + shown + " > /dev/full");
    const Result r = run_into_dev_full(args);
    EXPECT_EQ(r.exit_code, 1) << r.err;
    const std::string line = "pocketlm: error: stdout: No space left on device\n";
    ASSERT_GE(r.err.size(), line.size()) << r.err;
    EXPECT_EQ(r.err.substr(r.err.size() - line.size()), line) << r.err;
  }
}

// run stops at the first failed write: one token generated, not 50 samples of 64.
TEST(StdStreams, RunStopsGeneratingWhenStdoutFails) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
  const Result r = run_into_dev_full({"run", model_path("stories260K.bin"), "-z", model_path("tok512.bin"), "-n", "64",
                                      "-t", "0"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("generated 1 token,"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace pocketlm::test
