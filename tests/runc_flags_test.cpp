// run.c's reading of -s, -t, -p and -n (atoi/atof, shared/spec/llama2c-compat.md "Sampling"):
// the CLI's token log for a surprising flag value must equal what the engine generates with
// the value run.c would use, computed here by hand (a 64-bit glibc: strtol saturates at the
// long limits, atoi keeps the low 32 bits, the seed is that int stored in an unsigned 64-bit
// integer; atof's double is narrowed to float), and stderr must carry a warning naming the
// value used. The engine is driven directly, so a wrong mapping cannot agree with itself.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "golden_models.h"
#include "ports/posix/file_storage.h"
#include "pocketlm/runtime/session.h"
#include "test_support.h"

namespace pocketlm {
namespace {

constexpr std::uint64_t kTwoTo64Minus(std::uint64_t k) { return ~std::uint64_t{0} - k + 1; }

struct CliRun {
  test::CommandResult result;
  std::vector<int> tokens;  // next tokens from --token-log
};

// `pocketlm run stories260K.bin -z tok512.bin FLAGS --token-log ...` (no prompt: BOS only).
CliRun cli(const std::vector<std::string>& flags) {
  const std::string log = test::temp_dir() + "/tokens.txt";
  std::vector<std::string> args = {"run", test::model_path("stories260K.bin"), "-z", test::model_path("tok512.bin")};
  args.insert(args.end(), flags.begin(), flags.end());
  args.push_back("--token-log");
  args.push_back(log);
  CliRun r;
  r.result = test::run_pocketlm(args);
  const std::vector<unsigned char> bytes = test::read_file(log);
  std::istringstream in(std::string(bytes.begin(), bytes.end()));
  std::string line;
  std::getline(in, line);  // "prompt: 1"
  while (std::getline(in, line)) r.tokens.push_back(std::stoi(line));
  return r;
}

// The engine itself with the given sampler values.
std::vector<int> engine(float temperature, float topp, std::uint64_t seed, int steps, int seq_len = 0) {
  FileStorage model, tokenizer;
  EXPECT_TRUE(model.open(test::model_path("stories260K.bin").c_str(), "model").ok());
  EXPECT_TRUE(tokenizer.open(test::model_path("tok512.bin").c_str(), "tokenizer").ok());
  SessionOptions options;
  options.seq_len = seq_len;
  Session s;
  EXPECT_TRUE(s.open(model, tokenizer, options).ok());
  const std::int32_t bos = 1;
  std::vector<int> tokens;
  const Status st =
      s.generate(&bos, 1, steps, SamplerParams{temperature, topp, seed}, test::collect_tokens, &tokens, nullptr);
  EXPECT_TRUE(st.ok()) << st.message();
  return tokens;
}

// The warning line about `flag`, or "".
std::string warning(const test::CommandResult& r, const std::string& flag) {
  const std::string prefix = "pocketlm: warning: " + flag + ": ";
  const std::string::size_type at = r.err.find(prefix);
  return at == std::string::npos ? "" : r.err.substr(at, r.err.find('\n', at) - at);
}

// ---- -s ------------------------------------------------------------------------------------

struct SeedCase {
  const char* text;
  std::uint64_t seed;  // what run.c seeds its generator with
};

const SeedCase kSeeds[] = {
    {"-5", kTwoTo64Minus(5)},                    // a negative int, stored unsigned
    {"4294967301", 5},                           // 2^32 + 5: the low 32 bits
    {"4294967291", kTwoTo64Minus(5)},            // 2^32 - 5: low 32 bits are the int -5
    {"2147483648", kTwoTo64Minus(2147483648u)},  // 2^31: INT_MIN
    {"18446744073709551611", kTwoTo64Minus(1)},  // beyond a long: LONG_MAX, whose low 32 bits are -1
    {"12abc", 12},                               // the number the text starts with
    {"1.5", 1},
};

void PrintTo(const SeedCase& c, std::ostream* os) { *os << c.text; }

class RuncSeed : public ::testing::TestWithParam<SeedCase> {};

TEST_P(RuncSeed, TokensAreThoseOfRunCsSeed) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
  const SeedCase& c = GetParam();
  const CliRun r = cli({"-s", c.text, "-n", "40"});
  ASSERT_EQ(r.result.exit_code, 0) << r.result.err;
  EXPECT_EQ(r.tokens, engine(1.0f, 0.9f, c.seed, 40));
  const std::string w = warning(r.result, "-s");
  EXPECT_NE(w.find("using seed " + std::to_string(c.seed) + ","), std::string::npos) << r.result.err;
}

INSTANTIATE_TEST_SUITE_P(Cli, RuncSeed, ::testing::ValuesIn(kSeeds));

TEST(RuncSeed, SeedsThatDifferGiveDifferentStories) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
  // Otherwise the comparisons above would prove nothing.
  EXPECT_NE(engine(1.0f, 0.9f, kTwoTo64Minus(5), 40), engine(1.0f, 0.9f, kTwoTo64Minus(1), 40));
  EXPECT_NE(engine(1.0f, 0.9f, 5, 40), engine(1.0f, 0.9f, 12, 40));
}

TEST(RuncSeed, PlainSeedHasNoWarning) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
  const CliRun r = cli({"-s", "42", "-n", "40"});
  ASSERT_EQ(r.result.exit_code, 0) << r.result.err;
  EXPECT_EQ(r.tokens, engine(1.0f, 0.9f, 42, 40));
  EXPECT_EQ(r.result.err.find("warning"), std::string::npos) << r.result.err;
}

// Texts atoi reads as 0 mean the clock; the warning names the seed drawn, and that seed
// given back reproduces the run.
TEST(RuncSeed, ZeroFromAtoiMeansTheClockAndTheWarningNamesIt) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
  for (const char* text : {"abc", "0x10", "-9223372036854775809"}) {
    SCOPED_TRACE(text);
    const CliRun r = cli({"-s", text, "-n", "40"});
    ASSERT_EQ(r.result.exit_code, 0) << r.result.err;
    std::smatch m;
    const std::string w = warning(r.result, "-s");
    ASSERT_TRUE(std::regex_search(w, m, std::regex("using seed ([0-9]+) \\(the clock\\)"))) << r.result.err;
    const std::uint64_t seed = std::stoull(m[1].str());
    EXPECT_GT(seed, 1500000000u);  // (unsigned)time(NULL): after 2017
    EXPECT_EQ(r.tokens, engine(1.0f, 0.9f, seed, 40));
  }
}

// ---- -t and -p -----------------------------------------------------------------------------

TEST(RuncFloat, ToppThatRoundsToOneTurnsTopPOff) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
  // atof gives 0.99999997019767761, which as a float is 1.0f (top-p off); a float parse
  // would give 0.99999994f (top-p on) and another story.
  const CliRun r = cli({"-t", "1", "-s", "5", "-p", "0.99999997019767761", "-n", "64"});
  ASSERT_EQ(r.result.exit_code, 0) << r.result.err;
  const std::vector<int> off = engine(1.0f, 1.0f, 5, 64), on = engine(1.0f, 0.99999994f, 5, 64);
  ASSERT_NE(off, on) << "the case must tell the two readings apart";
  EXPECT_EQ(r.tokens, off);
  EXPECT_NE(warning(r.result, "-p").find("using 1 (top-p off"), std::string::npos) << r.result.err;
}

TEST(RuncFloat, ToppJustAboveOneIsOneNotClamped) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
  const CliRun r = cli({"-s", "5", "-p", "1.00000001", "-n", "64"});
  ASSERT_EQ(r.result.exit_code, 0) << r.result.err;
  ASSERT_NE(engine(1.0f, 1.0f, 5, 64), engine(1.0f, 0.9f, 5, 64));
  EXPECT_EQ(r.tokens, engine(1.0f, 1.0f, 5, 64));
  EXPECT_NE(warning(r.result, "-p").find("using 1 "), std::string::npos) << r.result.err;
}

TEST(RuncFloat, TemperatureThatRoundsToZeroIsGreedy) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
  const CliRun r = cli({"-s", "5", "-t", "1e-50", "-n", "64"});
  ASSERT_EQ(r.result.exit_code, 0) << r.result.err;
  EXPECT_EQ(r.tokens, engine(0.0f, 0.9f, 5, 64));
  EXPECT_NE(warning(r.result, "-t").find("using 0 (greedy)"), std::string::npos) << r.result.err;
}

TEST(RuncFloat, AtofReadsTheLeadingNumber) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
  const CliRun r = cli({"-s", "5", "-t", "0.8x", "-n", "64"});
  ASSERT_EQ(r.result.exit_code, 0) << r.result.err;
  ASSERT_NE(engine(0.8f, 0.9f, 5, 64), engine(1.0f, 0.9f, 5, 64));
  EXPECT_EQ(r.tokens, engine(0.8f, 0.9f, 5, 64));
  EXPECT_NE(warning(r.result, "-t").find("using 0.8,"), std::string::npos) << r.result.err;
  const CliRun none = cli({"-s", "5", "-t", "abc", "-n", "64"});  // atof("abc") = 0: greedy
  ASSERT_EQ(none.result.exit_code, 0) << none.result.err;
  EXPECT_EQ(none.tokens, engine(0.0f, 0.9f, 5, 64));
  EXPECT_NE(warning(none.result, "-t").find("'abc' is not a number"), std::string::npos) << none.result.err;
}

// ---- -n ------------------------------------------------------------------------------------

TEST(RuncSteps, NegativeStepsMeanSeqLen) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
  const CliRun r = cli({"-s", "5", "-n", "-5", "--seq-len", "24"});
  ASSERT_EQ(r.result.exit_code, 0) << r.result.err;
  const std::vector<int> expected = engine(1.0f, 0.9f, 5, 24, 24);
  EXPECT_EQ(r.tokens, expected);
  EXPECT_NE(warning(r.result, "-n").find("using 24,"), std::string::npos) << r.result.err;
  // As -n 0, without the warning.
  const CliRun zero = cli({"-s", "5", "-n", "0", "--seq-len", "24"});
  EXPECT_EQ(zero.tokens, expected);
  EXPECT_EQ(zero.result.err.find("warning"), std::string::npos) << zero.result.err;
}

TEST(RuncSteps, AtoiKeepsTheLow32Bits) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
  const CliRun one = cli({"-s", "5", "-n", "4294967297"});  // 2^32 + 1: one step
  ASSERT_EQ(one.result.exit_code, 0) << one.result.err;
  EXPECT_EQ(one.tokens, engine(1.0f, 0.9f, 5, 1));
  EXPECT_NE(warning(one.result, "-n").find("using 1,"), std::string::npos) << one.result.err;
  const CliRun wrapped = cli({"-s", "5", "-n", "2147483648", "--seq-len", "24"});  // INT_MIN: negative
  ASSERT_EQ(wrapped.result.exit_code, 0) << wrapped.result.err;
  EXPECT_EQ(wrapped.tokens, engine(1.0f, 0.9f, 5, 24, 24));
}

}  // namespace
}  // namespace pocketlm
