// Token-exact golden tests: every case of tests/golden/reference_runs.json is run through
// the pocketlm binary as a user would run it, and must produce the reference programs'
// prompt tokens and next tokens exactly, and their stdout byte for byte where it is ASCII.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "golden_models.h"
#include "pocketlm/kernels/kernels.h"
#include "test_support.h"

namespace pocketlm::test {
namespace {

using nlohmann::json;

const std::vector<json>& cases() { return golden_cases(); }

std::vector<std::string> case_names() {
  std::vector<std::string> names;
  for (const json& c : cases()) names.push_back(c["name"].get<std::string>());
  if (names.empty()) names.push_back("missing_golden_file");
  return names;
}

std::string number(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

bool is_ascii(const std::string& s) {
  for (unsigned char c : s)
    if (c >= 0x80) return false;
  return true;
}

std::string without_non_ascii(const std::string& s) {
  std::string out;
  for (char c : s)
    if (static_cast<unsigned char>(c) < 0x80) out.push_back(c);
  return out;
}

bool is_valid_utf8(const std::string& s) {
  std::size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    int n = c < 0x80 ? 0 : c >= 0xC2 && c <= 0xDF ? 1 : c >= 0xE0 && c <= 0xEF ? 2 : c >= 0xF0 && c <= 0xF4 ? 3 : -1;
    if (n < 0 || i + static_cast<std::size_t>(n) >= s.size() + (n == 0 ? 1 : 0)) return false;
    for (int k = 1; k <= n; ++k)
      if ((static_cast<unsigned char>(s[i + static_cast<std::size_t>(k)]) & 0xC0) != 0x80) return false;
    i += static_cast<std::size_t>(n) + 1;
  }
  return true;
}

std::string hex_decode(const std::string& hex) {
  std::string bytes;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2)
    bytes.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  return bytes;
}


class GoldenTest : public ::testing::TestWithParam<std::tuple<std::string, std::string>> {};

TEST_P(GoldenTest, MatchesReferenceTokensAndText) {
  ASSERT_FALSE(cases().empty()) << "cannot read " << golden_runs_path();
  const auto& [name, kernels] = GetParam();
  const json* found = nullptr;
  for (const json& c : cases())
    if (c["name"] == name) found = &c;
  ASSERT_NE(found, nullptr);
  const json& c = *found;

  // The stories42M and stories110M shapes are larger than the PSP's heap: they run as a PSP
  // would, under --heap 24MiB at a 256-token context, with what does not fit streamed from
  // the file. Natively only: under qemu-user their 0.2-0.6 GB of weights take too long.
  const std::string model_name = c["model"].get<std::string>();
  const bool streamed = model_name.rfind("synth42M", 0) == 0 || model_name.rfind("synth110M", 0) == 0;
  if (streamed && !emulator_prefix().empty()) GTEST_SKIP() << model_name << ": native builds only (qemu)";
  const std::string tokenizer = c["tokenizer"].get<std::string>();
  if (const std::string why = golden_inputs_missing(model_name, tokenizer); !why.empty()) GTEST_SKIP() << why;
  const std::string model = golden_model_path(model_name);
  ASSERT_FALSE(model.empty()) << model_name;  // a synth model that could not be made says why above
  const std::string log = temp_dir() + "/tokens.log";
  std::vector<std::string> args = {"run", model, "-z", model_path(tokenizer),
                                   "-t", number(c["temperature"].get<double>()), "-p",
                                   number(c["topp"].get<double>()), "-s", std::to_string(c["seed"].get<long long>()),
                                   "-n", std::to_string(c["steps"].get<int>()), "--token-log", log,
                                   "--kernels", kernels};
  if (streamed) args.insert(args.end(), {"--heap", "24MiB", "--seq-len", "256"});
  if (!c["prompt"].is_null()) {
    args.push_back("-i");
    args.push_back(c["prompt"].get<std::string>());
  }
  const CommandResult r = run_pocketlm(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;

  // The token log: "prompt: <ids>" then one next token per line.
  std::ifstream in(log);
  std::string line;
  ASSERT_TRUE(std::getline(in, line));
  std::istringstream prompt_line(line);
  std::string label;
  prompt_line >> label;
  EXPECT_EQ(label, "prompt:");
  std::vector<int> prompt_tokens, next_tokens;
  for (int id; prompt_line >> id;) prompt_tokens.push_back(id);
  for (int id; in >> id;) next_tokens.push_back(id);
  EXPECT_EQ(prompt_tokens, c["prompt_tokens"].get<std::vector<int>>());
  EXPECT_EQ(next_tokens, c["next_tokens"].get<std::vector<int>>());

  const std::string expected = hex_decode(c["stdout_hex"].get<std::string>());
  EXPECT_TRUE(is_valid_utf8(r.out));
  if (is_ascii(expected)) {
    // run.c drops every byte of a character spelled with byte tokens; pocketlm prints the
    // character. Without those characters the two outputs are the same bytes.
    EXPECT_EQ(without_non_ascii(r.out), expected);
  }
  if (!c["prompt"].is_null()) EXPECT_EQ(r.out.rfind(c["prompt"].get<std::string>(), 0), 0u) << r.out;
  EXPECT_NE(r.err.find("achieved tok/s: "), std::string::npos) << r.err;
}

INSTANTIATE_TEST_SUITE_P(ReferenceRuns, GoldenTest,
                         ::testing::Combine(::testing::ValuesIn(case_names()), ::testing::ValuesIn(available_kernel_names())),
                         [](const auto& info) { return std::get<0>(info.param) + "_" + std::get<1>(info.param); });

}  // namespace
}  // namespace pocketlm::test
