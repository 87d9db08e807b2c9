// Bad input on the command line: every error is one line on stderr naming the file or flag,
// the field and the value, exit code 1 (2 for a valid request not supported yet), and no
// output at all — never a crash, a hang or a silent clamp. What llama2.c's run.c accepts
// (its clamps: temperature < 0, top-p outside [0, 1], steps < 0 or > seq_len; its atoi/atof
// reading of flag values, runc_flags_test.cpp) runs as there, with a warning line.
#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <regex>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "test_support.h"

namespace pocketlm::test {
namespace {

std::string model() { return model_path("stories260K.bin"); }
std::string tok512() { return model_path("tok512.bin"); }

// The run command on stories260K with tok512 plus `extra` flags.
std::vector<std::string> run_args(std::vector<std::string> extra) {
  std::vector<std::string> args = {"run", model(), "-z", tok512()};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

// What `pocketlm <args>` printed, for failure messages.
std::string describe(const std::vector<std::string>& args, const CommandResult& r) {
  std::string s = "pocketlm";
  for (const auto& a : args) s += " '" + a + "'";
  return s + "\n  exit " + std::to_string(r.exit_code) + "\n  stderr: [" + r.err + "]\n  stdout: [" +
         r.out.substr(0, 200) + "]";
}

// The rule for an error: the exit code, exactly one line on stderr containing every needle,
// and nothing on stdout.
void expect_one_line_error(const std::vector<std::string>& args, const CommandResult& r, int exit_code,
                           const std::vector<std::string>& needles) {
  SCOPED_TRACE(describe(args, r));
  EXPECT_EQ(r.exit_code, exit_code);
  ASSERT_FALSE(r.err.empty());
  EXPECT_EQ(r.err.back(), '\n');
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "stderr must be exactly one line";
  for (const auto& n : needles) EXPECT_NE(r.err.find(n), std::string::npos) << "missing '" << n << "'";
  EXPECT_TRUE(r.out.empty()) << "an error must not print any output";
}

// The rule for a documented clamp: exit 0, a warning line containing every needle, and text.
void expect_warning(const std::vector<std::string>& args, const CommandResult& r,
                    const std::vector<std::string>& needles) {
  SCOPED_TRACE(describe(args, r));
  EXPECT_EQ(r.exit_code, 0);
  const std::string::size_type at = r.err.find("pocketlm: warning: ");
  ASSERT_NE(at, std::string::npos) << "no warning line";
  const std::string line = r.err.substr(at, r.err.find('\n', at) - at);
  for (const auto& n : needles) EXPECT_NE(line.find(n), std::string::npos) << "missing '" << n << "' in " << line;
  EXPECT_EQ(r.err.find("error"), std::string::npos);
  EXPECT_FALSE(r.out.empty()) << "a clamped run still generates text";
}

// ---- Flag errors: one table row per bad input ---------------------------------------------

struct FlagCase {
  const char* name;
  std::vector<std::string> flags;  // appended to `run stories260K.bin -z tok512.bin`
  int exit_code;
  std::vector<std::string> needles;  // flag/field and value, as they must appear
  // The error needs the model's header; the others come from the flags alone, before the
  // files are opened, so they run without stories260K too.
  bool reads_model = false;
};

const FlagCase kFlagCases[] = {
    {"UnknownFlag", {"--bogus"}, 1, {"'--bogus'", "not an option of run"}},
    {"UnknownFlagWithValue", {"--bogus", "7"}, 1, {"'--bogus 7'", "--bogus is not an option of run"}},
    // run.c's behaviour is undefined for these (NaN logits, or an overflow of every logit).
    {"TemperatureNan", {"-t", "nan"}, 1, {"-t", "'nan'", "not a finite number"}},
    {"TemperatureInf", {"-t", "inf"}, 1, {"-t", "'inf'", "not a finite number"}},
    {"TemperatureOverflowsFloat", {"-t", "1e50"}, 1, {"-t", "'1e50'", "outside the range of a float"}},
    {"ToppNan", {"-p", "nan"}, 1, {"-p", "'nan'", "not a finite number"}},
    {"HeapNotAByteSize", {"--heap", "bogus"}, 1, {"--heap", "'bogus'", "not a byte size"}},
    {"SeqLenAboveModel", {"--seq-len", "1000"}, 1, {"--seq-len", "1000", "512", "seq_len"}, true},
    {"UnknownKernels", {"--kernels", "nosuch"}, 1, {"--kernels", "'nosuch'", "not available", "available: reference"}},
    {"ThreadsZero", {"--threads", "0"}, 1, {"--threads", "0", "[1, 256]"}},
    {"UnknownMode", {"-m", "foo"}, 1, {"-m", "'foo'", "unknown mode"}},
    // A warning must not precede an error: the error stays the only line.
    {"ClampThenError", {"-t", "-1", "-s", "-5", "--heap", "bogus"}, 1, {"--heap", "'bogus'", "not a byte size"}},
};

// Names the case in test listings instead of dumping its bytes.
void PrintTo(const FlagCase& c, std::ostream* os) { *os << c.name; }

class FlagError : public ::testing::TestWithParam<FlagCase> {};

TEST_P(FlagError, OneLineNamingFlagAndValue) {
  const FlagCase& c = GetParam();
  if (c.reads_model) POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
  const auto args = run_args(c.flags);
  expect_one_line_error(args, run_pocketlm(args), c.exit_code, c.needles);
}

INSTANTIATE_TEST_SUITE_P(Run, FlagError, ::testing::ValuesIn(kFlagCases),
                         [](const ::testing::TestParamInfo<FlagCase>& info) { return std::string(info.param.name); });

// ---- File errors ----------------------------------------------------------------------------

TEST(CliFileError, MissingModel) {
  const std::string path = temp_dir() + "/no-such-model.bin";
  const std::vector<std::string> args = {"run", path, "-z", tok512()};
  expect_one_line_error(args, run_pocketlm(args), 1, {path, "model", "No such file"});
}

TEST(CliFileError, MissingTokenizer) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin");
  const std::string path = temp_dir() + "/no-such-tokenizer.bin";
  const std::vector<std::string> args = {"run", model(), "-z", path};
  expect_one_line_error(args, run_pocketlm(args), 1, {path, "tokenizer", "No such file"});
}

TEST(CliFileError, DirectoryAsModel) {
  const std::string path = temp_dir();
  const std::vector<std::string> args = {"run", path, "-z", tok512()};
  expect_one_line_error(args, run_pocketlm(args), 1, {path, "model", "directory"});
}

TEST(CliFileError, FifoAsModelDoesNotHang) {
  const std::string path = temp_dir() + "/model.fifo";
  ASSERT_EQ(::mkfifo(path.c_str(), 0644), 0);
  const std::vector<std::string> args = {"run", path, "-z", tok512()};
  bool in_time = false;
  const CommandResult r = run_pocketlm_with_fifo(args, path, 5, &in_time);
  EXPECT_TRUE(in_time) << "pocketlm blocked on the FIFO";
  expect_one_line_error(args, r, 1, {path, "model", "FIFO"});
}

// Runs pocketlm as the unprivileged user `nobody` (for root, which can read a mode-000
// file). Returns false when this process cannot switch users.
bool run_as_nobody(const std::vector<std::string>& args, const std::string& dir, CommandResult* result) {
  const std::string out_path = dir + "/stdout", err_path = dir + "/stderr";
  std::vector<std::string> storage = {pocketlm_binary()};
  storage.insert(storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : storage) argv.push_back(a.data());
  argv.push_back(nullptr);
  constexpr int kCannotSwitch = 125;
  const pid_t pid = ::fork();
  if (pid < 0) return false;
  if (pid == 0) {
    const int in = ::open("/dev/null", O_RDONLY);
    const int out = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int err = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (in < 0 || out < 0 || err < 0 || ::dup2(in, 0) < 0 || ::dup2(out, 1) < 0 || ::dup2(err, 2) < 0)
      ::_exit(kCannotSwitch);
    if (::setgroups(0, nullptr) != 0 || ::setgid(65534) != 0 || ::setuid(65534) != 0) ::_exit(kCannotSwitch);
    ::execv(argv[0], argv.data());
    ::_exit(kCannotSwitch);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (WIFEXITED(status) && WEXITSTATUS(status) == kCannotSwitch) return false;
  result->exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  const std::vector<unsigned char> out = read_file(out_path), err = read_file(err_path);
  result->out.assign(out.begin(), out.end());
  result->err.assign(err.begin(), err.end());
  return true;
}

TEST(CliFileError, UnreadableModel) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin");
  const std::vector<unsigned char> bytes = read_file(model());
  ASSERT_FALSE(bytes.empty());
  CommandResult r;
  std::vector<std::string> args;
  if (::geteuid() != 0) {
    const std::string path = temp_dir() + "/unreadable.bin";
    write_file(path, bytes);
    ASSERT_EQ(::chmod(path.c_str(), 0), 0);
    args = {"run", path, "-z", tok512()};
    r = run_pocketlm(args);
    expect_one_line_error(args, r, 1, {path, "model", "Permission denied"});
    return;
  }
  // Root reads any file, so the program runs as `nobody` from a directory it may enter.
  char templ[] = "/tmp/pocketlm-unreadable-XXXXXX";
  ASSERT_NE(::mkdtemp(templ), nullptr);
  const std::string dir = templ;
  ASSERT_EQ(::chmod(dir.c_str(), 0777), 0);
  const std::string path = dir + "/unreadable.bin";
  write_file(path, bytes);
  ASSERT_EQ(::chmod(path.c_str(), 0), 0);
  args = {"run", path, "-z", tok512()};
  const bool ran = run_as_nobody(args, dir, &r);
  const std::string cleanup = "rm -rf '" + dir + "'";
  EXPECT_EQ(std::system(cleanup.c_str()), 0);
  if (!ran) GTEST_SKIP() << "running as root and cannot switch to nobody";
  expect_one_line_error(args, r, 1, {path, "model", "Permission denied"});
}

TEST(CliFileError, TokenLogInMissingDirectory) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
  const std::string dir = temp_dir() + "/missing";
  const std::string log = dir + "/tokens.txt";
  const auto args = run_args({"-n", "5", "-s", "42", "--token-log", log});
  expect_one_line_error(args, run_pocketlm(args), 1, {"--token-log", log, "No such file"});
  EXPECT_FALSE(file_exists(dir));
}

// ---- Values that are not errors -------------------------------------------------------------

TEST(CliAccepts, SeedBeyondALongIsReadAsAtoiDoes) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
  // strtol saturates at LONG_MAX, whose low 32 bits are the int -1: seed 2^64 - 1.
  const auto args = run_args({"-s", "18446744073709551616", "-n", "5"});
  expect_warning(args, run_pocketlm(args), {"-s", "LONG_MAX", "using seed 18446744073709551615"});
}

TEST(CliClampWarning, NegativeSteps) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
  const auto args = run_args({"-n", "-5", "-s", "42"});
  expect_warning(args, run_pocketlm(args), {"-n", "-5", "negative", "seq_len", "using 512"});
}

TEST(CliClampWarning, NegativeTemperature) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
  const auto args = run_args({"-t", "-1", "-n", "10", "-s", "42"});
  expect_warning(args, run_pocketlm(args), {"-t", "-1", "using 0"});
}

TEST(CliClampWarning, ToppAboveOne) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
  const auto args = run_args({"-p", "1.5", "-n", "10", "-s", "42"});
  expect_warning(args, run_pocketlm(args), {"-p", "1.5", "using 0.9"});
}

// run.c drops -y in generate mode; pocketlm runs as it does, but says so.
TEST(CliClampWarning, SystemPromptInGenerateMode) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
  const auto args = run_args({"-y", "You are a pirate.", "-n", "10", "-s", "42"});
  expect_warning(args, run_pocketlm(args), {"-y", "generate mode", "not used", "-m chat"});
}

TEST(CliClampWarning, StepsAboveSeqLen) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
  const auto args = run_args({"-n", "100000", "-s", "42"});
  expect_warning(args, run_pocketlm(args), {"-n", "100000", "seq_len 512", "using 512"});
}

// ---- A prompt longer than the context -------------------------------------------------------

// Short enough in bytes to be encoded (34 bytes could be 6 tokens), then refused by its count.
TEST(CliPromptError, LongerThanSeqLen) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
  const std::string prompt = "Once upon a time, there was a girl";
  const std::string dir = temp_dir();
  const auto args = run_args({"--seq-len", "8", "-i", prompt, "--token-log", dir + "/tokens.txt"});
  const CommandResult r = run_pocketlm(args);
  expect_one_line_error(args, r, 1, {"-i", "tokens", "8 (seq_len)"});
  EXPECT_TRUE(directory_entries(dir).empty()) << "nothing may be written on error";
  // The message says how many tokens the prompt needs, which is more than the limit.
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.err, m, std::regex("encodes to ([0-9]+) tokens"))) << r.err;
  EXPECT_GT(std::stoi(m[1].str()), 8);
}

// A prompt whose byte length alone proves it cannot fit (every token spells at most the longest
// piece's bytes) is refused before it is encoded, and the message says so. 100 KB: a single
// argument stays below Linux's 128 KiB limit.
TEST(CliPromptError, FarLongerThanSeqLenIsRefusedBeforeEncoding) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
  std::string prompt;
  while (prompt.size() < 100000) prompt += "Once upon a time, there was a little girl. ";
  for (const char* command : {"run", "bench"}) {
    const std::vector<std::string> args = {command, model(), "-z", tok512(), "-i", prompt};
    expect_one_line_error(args, run_pocketlm(args), 1,
                          {"-i: " + std::to_string(prompt.size()) + " bytes encode", "at least", "512 (seq_len)"});
  }
}

// ---- A header asking for more memory than any host has ----------------------------------------

// A valid v1 checkpoint (dim 32, one head, hidden_dim 1, 512 layers: the most pocketlm runs,
// vocab 512) whose seq_len = 2^31 - 1 makes the kv cache 256 TiB: beyond the address space of
// x86-64 and aarch64 hosts (47 and 48 bits), so the arena allocation fails even where memory is
// overcommitted.
TEST(CliHeaderError, SeqLenTooBigForTheHost) {
  POCKETLM_REQUIRE_FILES("models/tok512.bin");
  const std::int32_t dims[7] = {32, 1, 512, 1, 1, 512, INT32_MAX};
  std::vector<unsigned char> bytes;
  put_i32(bytes, 0x616b3432);
  put_i32(bytes, 1);
  for (std::int32_t d : dims) put_i32(bytes, d);
  bytes.push_back(1);  // shared classifier
  bytes.resize(256, 0);
  // Per layer: rms_att 32 + rms_ffn 32 + wq wk wv wo 4 x 32 x 32 + w1 w2 w3 3 x 32 floats; then
  // rms_final 32 and the embedding 512 x 32.
  const std::size_t floats = 512u * (32 + 32 + 4 * 32 * 32 + 3 * 32) + 32 + 512 * 32;
  bytes.resize(256 + 4 * floats, 0);
  const std::string path = temp_dir() + "/huge-seq-len.bin";
  write_file(path, bytes);
  const std::vector<std::string> args = {"run", path, "-z", tok512(), "-n", "3", "-s", "1"};
  expect_one_line_error(args, run_pocketlm(args), 1,
                        {path, "seq_len = 2147483647", "kv cache", "--seq-len"});
}

}  // namespace
}  // namespace pocketlm::test
