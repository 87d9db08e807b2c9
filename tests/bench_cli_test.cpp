// `pocketlm bench`: it runs and reports its table, and its weight-bytes-per-token figure
// matches a count made here from the checkpoint header alone (not from the engine's tensor
// table), so the bandwidth it derives rests on an independent number. No timing asserts:
// speed depends on the machine.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "test_support.h"

namespace pocketlm::test {
namespace {

std::string model() { return model_path("stories260K.bin"); }
std::string tok512() { return model_path("tok512.bin"); }

// The `key | value` row of the bench table, or "" when missing.
std::string row(const std::string& out, const std::string& key) {
  const std::string::size_type at = out.find("\n" + key + " ");
  if (at == std::string::npos) return "";
  return out.substr(at + 1, out.find('\n', at + 1) - at - 1);
}

// Bytes an fp32 llama2.c v0 forward pass reads per token: every layer matrix and rms norm,
// the final norm, the classifier (shared: vocab x dim) and one embedding row.
std::uint64_t fp32_bytes_per_token(const std::string& path) {
  const std::vector<unsigned char> file = read_file(path);
  std::int32_t h[7];  // dim, hidden_dim, n_layers, n_heads, n_kv_heads, vocab_size, seq_len
  std::memcpy(h, file.data(), sizeof h);
  const std::uint64_t dim = h[0], hidden = h[1], layers = h[2], kv_dim = dim * h[4] / h[3];
  const std::uint64_t vocab = h[5] < 0 ? -h[5] : h[5];
  const std::uint64_t per_layer = 2 * dim * dim + 2 * dim * kv_dim + 3 * dim * hidden + 2 * dim;
  return 4 * (layers * per_layer + dim + vocab * dim + dim);
}

TEST(BenchCli, ReportsDecodeSpeedAndWeightBytes) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
  const CommandResult r = run_pocketlm({"bench", model(), "-z", tok512(), "-n", "16", "--repeats", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(row(r.out, "decode tok/s"), "") << r.out;
  EXPECT_NE(row(r.out, "effective GB/s"), "") << r.out;
  const std::uint64_t expected = fp32_bytes_per_token(model());
  EXPECT_EQ(expected, 1040384u);  // dim 64, hidden 172, 5 layers, 8/4 heads, vocab 512
  const std::string bytes = row(r.out, "weight bytes/token");
  EXPECT_NE(bytes.find("| " + std::to_string(expected) + " "), std::string::npos) << bytes;
}

// Bad input: exit 1, one error line naming the flag or file and the value, nothing on stdout.
void expect_error(const std::vector<std::string>& args, const std::vector<std::string>& needles) {
  const CommandResult r = run_pocketlm(args);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_EQ(r.err.rfind("pocketlm: error: ", 0), 0u) << r.err;
  for (const auto& n : needles) EXPECT_NE(r.err.find(n), std::string::npos) << "missing '" << n << "' in " << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
}

TEST(BenchCli, BadRepeatsIsOneLineError) {
  expect_error({"bench", model(), "-z", tok512(), "--repeats", "0"}, {"--repeats", "0"});
}

TEST(BenchCli, SampledRepeatsReportTheirRateAndTheRatio) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
  const CommandResult r =
      run_pocketlm({"bench", model(), "-z", tok512(), "-n", "24", "--repeats", "2", "-t", "1", "-p", "0.9", "-s", "7"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(row(r.out, "seq_len / steps").find("each followed by one sampled (-t 1 -p 0.9 -s 7)"), std::string::npos)
      << r.out;
  EXPECT_NE(row(r.out, "sampled decode tok/s"), "") << r.out;
  EXPECT_NE(row(r.out, "sampled / greedy").find("at the median ms/token"), std::string::npos) << r.out;
  // Greedy only unless -t > 0.
  const CommandResult g = run_pocketlm({"bench", model(), "-z", tok512(), "-n", "8", "--repeats", "1"});
  ASSERT_EQ(g.exit_code, 0) << g.err;
  EXPECT_EQ(row(g.out, "sampled / greedy"), "") << g.out;
}

TEST(BenchCli, BadSamplingFlagsAreOneLineErrors) {
  expect_error({"bench", model(), "-z", tok512(), "-t", "-1"}, {"-t", "-1"});
  expect_error({"bench", model(), "-z", tok512(), "-t", "nan"}, {"-t"});
  expect_error({"bench", model(), "-z", tok512(), "-t", "1", "-p", "1.5"}, {"-p", "1.5"});
  expect_error({"bench", model(), "-z", tok512(), "-t", "1", "-s", "0"}, {"-s", "0"});
}

// Counts of one are singular: "1 repeat", "1 pass", "up to 1 token".
TEST(BenchCli, CountsOfOneAreSingular) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
  const CommandResult r =
      run_pocketlm({"bench", model(), "-z", tok512(), "-n", "5", "--repeats", "1", "--prefill-batch", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(row(r.out, "seq_len / steps").find(", prompt 5 tokens, 1 repeat, greedy"), std::string::npos) << r.out;
  EXPECT_NE(row(r.out, "prefill tok/s").find(" (4 passes, up to 1 token per weight read)"), std::string::npos) << r.out;
  EXPECT_NE(row(r.out, "decode tok/s").find(" (1 pass; "), std::string::npos) << r.out;
}

TEST(BenchCli, ZeroStepsMeanSeqLenAsForRun) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
  const CommandResult r = run_pocketlm({"bench", model(), "-z", tok512(), "-n", "0", "--seq-len", "16", "--repeats", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(row(r.out, "seq_len / steps").find("| 16 / 16,"), std::string::npos) << r.out;
}

TEST(BenchCli, OverHeapPrintsThePlanAndExitsOne) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
  const CommandResult r = run_pocketlm({"bench", model(), "-z", tok512(), "--heap", "512K"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("kv cache"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("pocketlm: error: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("budget is 524288 bytes"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
}

TEST(BenchCli, UnknownOptionIsNamedInOrder) {
  expect_error({"bench", model(), "-z", tok512(), "--bogus", "1M"}, {"'--bogus 1M'", "--bogus is not an option of bench"});
}

TEST(BenchCli, MissingModelIsOneLineError) {
  const std::string missing = temp_dir() + "/no-such-model.bin";
  expect_error({"bench", missing, "-z", tok512()}, {missing});
}

}  // namespace
}  // namespace pocketlm::test
