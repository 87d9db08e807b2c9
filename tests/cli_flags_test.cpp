// Flags as users give them: a flag given twice (the last wins, as llama2.c's argv loop), a
// mistyped flag (a suggestion), a flag without its value, an empty output path (refused before any work), the prompt
// from a file or stdin, and a -n that ends inside the prompt (a warning).
#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "test_support.h"

namespace pocketlm::test {
namespace {

std::vector<std::string> run_args(std::vector<std::string> extra) {
  std::vector<std::string> args = {"run", model_path("stories260K.bin"), "-z", model_path("tok512.bin"), "-t", "0"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

TEST(CliFlags, ARepeatedFlagTakesItsLastValue) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
  const CommandResult twice = run_pocketlm(run_args({"-n", "99", "-n", "12", "-i", "x", "-i", "Once upon a time"}));
  const CommandResult once = run_pocketlm(run_args({"-n", "12", "-i", "Once upon a time"}));
  ASSERT_EQ(twice.exit_code, 0) << twice.err;
  ASSERT_EQ(once.exit_code, 0) << once.err;
  EXPECT_EQ(twice.out, once.out);
}

TEST(CliFlags, AMistypedFlagGetsASuggestion) {
  const CommandResult r = run_pocketlm({"run", "m.bin", "--hep", "24MiB"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("--hep is not an option of run; did you mean --heap?"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  const CommandResult log = run_pocketlm({"run", "m.bin", "--tokenlog=x"});
  EXPECT_NE(log.err.find("did you mean --token-log?"), std::string::npos) << log.err;
}

// A flag at the end of the line, without its value: named, with what it takes, in one line.
TEST(CliFlags, AFlagWithoutItsValueIsNamed) {
  const CommandResult heap = run_pocketlm({"run", "m.bin", "--heap"});
  EXPECT_EQ(heap.exit_code, 1);
  EXPECT_EQ(heap.err, "pocketlm: error: --heap: needs a value (SIZE), and none was given (see pocketlm help run)\n");
  const CommandResult n = run_pocketlm({"plan", "m.bin", "--seq-len"});
  EXPECT_EQ(n.exit_code, 1);
  EXPECT_NE(n.err.find("--seq-len: needs a value"), std::string::npos) << n.err;
  EXPECT_EQ(n.err.find("required"), std::string::npos) << "CLI11's own words: " << n.err;
}

TEST(CliFlags, AnEmptyOutputPathIsRefusedFirst) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin");
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"convert", model_path("stories260K.bin"), "--to", "q80", "-o", ""},
        std::vector<std::string>{"synth", "stories260K", "--seed", "1", "-o", ""}}) {
    const CommandResult r = run_pocketlm(args);
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_EQ(r.err, "pocketlm: error: -o '': an empty path; give the output file's name\n");
    EXPECT_EQ(r.out, "");
  }
}

TEST(CliFlags, ThePromptFromAFileOrStdin) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
  const std::string file = temp_dir() + "/prompt.txt";
  const std::string prompt = "Once upon a time, a dog";
  write_file(file, std::vector<unsigned char>(prompt.begin(), prompt.end()));
  std::string with_newline = prompt + "\n";
  const std::string file_nl = temp_dir() + "/prompt-nl.txt";
  write_file(file_nl, std::vector<unsigned char>(with_newline.begin(), with_newline.end()));
  const CommandResult given = run_pocketlm(run_args({"-n", "24", "-i", prompt}));
  ASSERT_EQ(given.exit_code, 0) << given.err;
  const CommandResult from_file = run_pocketlm(run_args({"-n", "24", "-f", file_nl}));
  EXPECT_EQ(from_file.exit_code, 0) << from_file.err;
  EXPECT_EQ(from_file.out, given.out);
  const CommandResult from_stdin = run_pocketlm_with_input(run_args({"-n", "24", "-i", "-"}), file);
  EXPECT_EQ(from_stdin.exit_code, 0) << from_stdin.err;
  EXPECT_EQ(from_stdin.out, given.out);
  const CommandResult both = run_pocketlm(run_args({"-i", "x", "-f", file}));
  EXPECT_EQ(both.exit_code, 1);
  EXPECT_NE(both.err.find("-i and -f " + file + ": give the prompt one way"), std::string::npos) << both.err;
}

TEST(CliFlags, StepsEndingInsideThePromptAreAWarning) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
  const CommandResult r = run_pocketlm(run_args({"-n", "3", "-i", "Once upon a time, there was a little dog"}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("pocketlm: warning: -n: 3 steps end inside the prompt's"), std::string::npos) << r.err;
  const CommandResult fits = run_pocketlm(run_args({"-n", "64", "-i", "Once upon a time"}));
  EXPECT_EQ(fits.err.find("warning"), std::string::npos) << fits.err;
}

}  // namespace
}  // namespace pocketlm::test
