// The CLI's front: one flag registry (a session flag reads the same in every command that
// takes it), `pocketlm help [COMMAND]`, "did you mean" for a mistyped command, and --version
// with the commit, the build type and the kernel backends.
#include <gtest/gtest.h>

#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "pocketlm/kernels/kernels.h"
#include "test_support.h"

namespace pocketlm::test {
namespace {

// "--kv f32|f16=f32   KV cache ..." -> {"--kv", "KV cache ..."}: the flag and its help, with
// CLI11's wrapped continuation lines joined.
std::map<std::string, std::string> flag_help(const std::string& help) {
  std::map<std::string, std::string> flags;
  std::istringstream lines(help);
  std::string line, current;
  while (std::getline(lines, line)) {
    if (line.rfind("  -", 0) == 0) {
      std::istringstream words(line);
      std::string flag, type;
      words >> flag >> type;
      std::string text;
      std::getline(words, text);
      text.erase(0, text.find_first_not_of(' '));
      current = flag;
      flags[current] = text;
    } else if (!current.empty() && line.rfind("      ", 0) == 0) {
      flags[current] += line.substr(line.find_first_not_of(' '));
    } else {
      current.clear();
    }
  }
  return flags;
}

TEST(CliRegistry, ASessionFlagSaysTheSameInEveryCommand) {
  const std::vector<std::string> commands = {"run", "plan", "bench", "eval", "chat", "console"};
  std::map<std::string, std::map<std::string, std::string>> helps;
  for (const std::string& c : commands) {
    const CommandResult r = run_pocketlm({c, "--help"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    helps[c] = flag_help(r.out);
  }
  // Every command that opens a session takes these, with one text.
  for (const char* flag : {"-z", "--seq-len", "--kernels", "--threads"}) {
    SCOPED_TRACE(flag);
    for (const std::string& c : commands) {
      ASSERT_TRUE(helps[c].count(flag)) << c;
      EXPECT_EQ(helps[c][flag], helps["run"][flag]) << c;
    }
  }
  // The budgeted ones (eval reads a text on the host, unbounded).
  for (const char* flag : {"--heap", "--device", "--kv"}) {
    SCOPED_TRACE(flag);
    for (const std::string& c : {"plan", "bench", "chat", "console"}) {
      ASSERT_TRUE(helps[c].count(flag)) << c;
      EXPECT_EQ(helps[c][flag], helps["run"][flag]) << c;
    }
    EXPECT_FALSE(helps["eval"].count(flag));
  }
  // run.c's sampling flags: run, chat and console read them alike; bench's mean other things.
  for (const char* flag : {"-t", "-p", "-s"}) {
    SCOPED_TRACE(flag);
    EXPECT_EQ(helps["chat"][flag], helps["run"][flag]);
    EXPECT_EQ(helps["console"][flag], helps["run"][flag]);
    EXPECT_NE(helps["bench"][flag], helps["run"][flag]);
  }
}

TEST(CliRegistry, HelpShowsEachCommandsDefault) {
  const CommandResult console = run_pocketlm({"console", "--help"});
  EXPECT_NE(console.out.find("--device psp|psp-2000|esp32s3=psp"), std::string::npos) << console.out;
  const CommandResult bench = run_pocketlm({"bench", "--help"});
  EXPECT_NE(bench.out.find("--threads INT=1"), std::string::npos) << bench.out;
  const CommandResult run = run_pocketlm({"run", "--help"});
  EXPECT_NE(run.out.find("-t FLOAT=1.0"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("GGUF"), std::string::npos) << "run's model argument names GGUF";
}

TEST(CliRegistry, HelpCommandIsTheCommandsHelp) {
  for (const char* c : {"run", "plan", "convert", "devices"}) {
    SCOPED_TRACE(c);
    const CommandResult help = run_pocketlm({"help", c});
    const CommandResult flag = run_pocketlm({c, "--help"});
    EXPECT_EQ(help.exit_code, 0) << help.err;
    EXPECT_EQ(help.out, flag.out);
  }
  const CommandResult top = run_pocketlm({"help"});
  EXPECT_EQ(top.exit_code, 0);
  EXPECT_NE(top.out.find("Usage: pocketlm"), std::string::npos) << top.out;
  EXPECT_NE(top.out.find("convert"), std::string::npos) << top.out;
}

TEST(CliRegistry, MistypedCommandGetsASuggestion) {
  const CommandResult r = run_pocketlm({"runn", "model.bin"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "pocketlm: error: 'runn' is not a pocketlm command; did you mean 'run'?\n");
  const CommandResult h = run_pocketlm({"help", "plann"});
  EXPECT_EQ(h.exit_code, 1);
  EXPECT_NE(h.err.find("did you mean 'plan'?"), std::string::npos) << h.err;
}

TEST(CliRegistry, UnknownWordBeforeACommandIsAnError) {
  const CommandResult r = run_pocketlm({"foo", "run"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("'foo' is not a pocketlm command (commands: run, plan,"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("subcommand is required"), std::string::npos) << r.err;
  const CommandResult none = run_pocketlm({});
  EXPECT_EQ(none.exit_code, 1);
  EXPECT_EQ(none.err, "pocketlm: error: no command given (see pocketlm help)\n");
}

TEST(CliRegistry, ParseErrorsNameTheCommand) {
  const CommandResult r = run_pocketlm({"plan"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "pocketlm: error: plan: model is required (see pocketlm help plan)\n");
}

TEST(CliRegistry, VersionNamesCommitBuildAndBackends) {
  const CommandResult r = run_pocketlm({"--version"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("pocketlm 0.", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("(commit "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" build)"), std::string::npos) << r.out;
  std::string compiled;
  for (const char* const* name = kernel_names(); *name; ++name) compiled += (compiled.empty() ? "" : ", ") + std::string(*name);
  EXPECT_NE(r.out.find("kernels compiled in: " + compiled + "\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(default: " + std::string(default_kernels().name) + ")"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace pocketlm::test
