// GGUF through the binary, as a user runs it:
// - stories260K and synth15M converted to GGUF f32 (`convert --to gguf`, their tokenizer
//   embedded) give llama2.c's golden tokens and text with no -z, on every backend: the
//   conversion keeps wq/wk's RoPE pairing and the tokenizer's pieces (format/gguf.h);
// - their Q8_0 and Q4_0 conversions give the same tokens on every backend;
// - GGUF -> GGUF re-typing writes the same bytes as converting the .bin directly;
// - an f32 conversion holds every tensor with the .bin's bytes (wq and wk unpermuted).
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>

#include "golden_models.h"
#include "pocketlm/format/model_reader.h"
#include "pocketlm/kernels/kernels.h"
#include "ports/posix/file_storage.h"
#include "test_support.h"

namespace pocketlm::test {
namespace {

using nlohmann::json;

const std::vector<json>& cases() {
  static const std::vector<json> kCases = [] {
    std::vector<json> out;
    for (const json& c : golden_cases())
      if (c["model"] == "stories260K.bin" || c["model"] == "synth15M.bin") out.push_back(c);
    return out;
  }();
  return kCases;
}

std::vector<std::string> case_names() {
  std::vector<std::string> names;
  for (const json& c : cases()) names.push_back(c["name"].get<std::string>());
  if (names.empty()) names.push_back("missing_golden_file");
  return names;
}


// `model` (a golden model name) converted to GGUF of `type` with `tokenizer` embedded, once
// per test process.
std::string gguf_of(const std::string& model, const std::string& tokenizer, const std::string& type) {
  static std::mutex mu;
  static std::map<std::string, std::string> made;
  std::lock_guard<std::mutex> lock(mu);
  const std::string key = model + "/" + type;
  if (made.count(key)) return made[key];
  const std::string src = golden_model_path(model);
  if (src.empty()) return "";
  static const std::string dir = temp_dir();
  const std::string out = dir + "/" + model.substr(0, model.find('.')) + "_" + type + ".gguf";
  const CommandResult r =
      run_pocketlm({"convert", src, "--to", "gguf", "--type", type, "-z", model_path(tokenizer), "-o", out});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("tokenizer embedded"), std::string::npos) << r.out;
  made[key] = r.exit_code == 0 ? out : "";
  return made[key];
}

std::string number(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

struct CaseRun {
  std::vector<int> prompt, next;
  std::string out;
};

// Runs a golden case's flags on `model` without -z; the token log read back.
CaseRun run_case(const json& c, const std::string& model, const std::string& kernels) {
  const std::string log = temp_dir() + "/tokens.log";
  std::vector<std::string> args = {"run", model, "-t", number(c["temperature"].get<double>()), "-p",
                                   number(c["topp"].get<double>()), "-s", std::to_string(c["seed"].get<long long>()),
                                   "-n", std::to_string(c["steps"].get<int>()), "--token-log", log, "--kernels", kernels};
  if (!c["prompt"].is_null()) {
    args.push_back("-i");
    args.push_back(c["prompt"].get<std::string>());
  }
  const CommandResult r = run_pocketlm(args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  CaseRun run;
  run.out = r.out;
  std::ifstream in(log);
  std::string line, label;
  std::getline(in, line);
  std::istringstream prompt_line(line);
  prompt_line >> label;
  for (int id; prompt_line >> id;) run.prompt.push_back(id);
  for (int id; in >> id;) run.next.push_back(id);
  return run;
}

const json* find_case(const std::string& name) {
  for (const json& c : cases())
    if (c["name"] == name) return &c;
  return nullptr;
}

class GgufGolden : public ::testing::TestWithParam<std::tuple<std::string, std::string>> {};

TEST_P(GgufGolden, F32ConversionGivesTheGoldenTokensWithItsOwnTokenizer) {
  const auto& [name, kernels] = GetParam();
  const json* c = find_case(name);
  ASSERT_NE(c, nullptr) << "cannot read " << golden_runs_path();
  if (const std::string why = golden_inputs_missing((*c)["model"], (*c)["tokenizer"]); !why.empty()) GTEST_SKIP() << why;
  const std::string model = gguf_of((*c)["model"], (*c)["tokenizer"], "f32");
  ASSERT_FALSE(model.empty());
  const CaseRun r = run_case(*c, model, kernels);
  EXPECT_EQ(r.prompt, (*c)["prompt_tokens"].get<std::vector<int>>());
  EXPECT_EQ(r.next, (*c)["next_tokens"].get<std::vector<int>>());
  if (!(*c)["prompt"].is_null()) EXPECT_EQ(r.out.rfind((*c)["prompt"].get<std::string>(), 0), 0u) << r.out;
}

INSTANTIATE_TEST_SUITE_P(ReferenceRuns, GgufGolden,
                         ::testing::Combine(::testing::ValuesIn(case_names()), ::testing::ValuesIn(available_kernel_names())),
                         [](const auto& info) { return std::get<0>(info.param) + "_" + std::get<1>(info.param); });

class GgufQuantized : public ::testing::TestWithParam<std::tuple<std::string, std::string>> {};

// Every backend gives the reference backend's tokens on the quantized conversions.
TEST_P(GgufQuantized, SameTokensOnEveryBackend) {
  const auto& [name, type] = GetParam();
  const json* c = find_case(name);
  ASSERT_NE(c, nullptr) << "cannot read " << golden_runs_path();
  if (const std::string why = golden_inputs_missing((*c)["model"], (*c)["tokenizer"]); !why.empty()) GTEST_SKIP() << why;
  const std::string model = gguf_of((*c)["model"], (*c)["tokenizer"], type);
  ASSERT_FALSE(model.empty());
  const CaseRun want = run_case(*c, model, "reference");
  ASSERT_FALSE(want.next.empty());
  EXPECT_EQ(want.prompt, (*c)["prompt_tokens"].get<std::vector<int>>());  // the tokenizer is the same
  for (const std::string& k : available_kernel_names()) {
    const CaseRun got = run_case(*c, model, k);
    EXPECT_EQ(got.next, want.next) << k;
    EXPECT_EQ(got.out, want.out) << k;
  }
}

INSTANTIATE_TEST_SUITE_P(Conversions, GgufQuantized,
                         ::testing::Combine(::testing::Values("s260K_greedy_layla", "s260K_topp_133742",
                                                              "synth15M_greedy", "synth15M_topp"),
                                            ::testing::Values("q8_0", "q4_0")),
                         [](const auto& info) { return std::get<0>(info.param) + "_" + std::get<1>(info.param); });
// F16 runs the reference kernel everywhere but avx2 (software fp16 conversion, slow under qemu):
// stories260K only, which keeps the emulated MIPS and aarch64 runs short.
INSTANTIATE_TEST_SUITE_P(ConversionsF16, GgufQuantized,
                         ::testing::Combine(::testing::Values("s260K_greedy_layla", "s260K_topp_133742"),
                                            ::testing::Values("f16")),
                         [](const auto& info) { return std::get<0>(info.param) + "_" + std::get<1>(info.param); });

// GGUF -> GGUF re-typing streams through the same conversion: the bytes of converting the .bin
// directly (general.name is the input's base name, the same here).
TEST(GgufConvert, RetypingAGgufEqualsConvertingTheBin) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/stories260K_q80.bin", "models/tok512.bin");
  const std::string dir = temp_dir();
  const std::string bin = dir + "/m.bin";
  write_file(bin, read_file(model_path("stories260K.bin")));
  const std::string f32 = dir + "/m.gguf", direct = dir + "/direct.gguf", again = dir + "/again.gguf";
  ASSERT_EQ(run_pocketlm({"convert", bin, "--to", "gguf", "-z", model_path("tok512.bin"), "-o", f32}).exit_code, 0);
  ASSERT_EQ(run_pocketlm({"convert", bin, "--to", "gguf", "--type", "q4_0", "-z", model_path("tok512.bin"), "-o", direct})
                .exit_code, 0);
  const CommandResult r = run_pocketlm({"convert", f32, "--to", "gguf", "--type", "q4_0", "-o", again});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("F16 for blk.N.ffn_down.weight"), std::string::npos) << r.out;  // 172 columns
  EXPECT_EQ(sha256_of(direct), sha256_of(again));
  // The q80 checkpoint converts too (dequantized, then re-quantized) and runs.
  const std::string from_q80 = dir + "/from_q80.gguf";
  ASSERT_EQ(run_pocketlm({"convert", model_path("stories260K_q80.bin"), "--to", "gguf", "--type", "q8_0", "-z",
                          model_path("tok512.bin"), "-o", from_q80}).exit_code, 0);
  const CommandResult run = run_pocketlm({"run", from_q80, "-t", "0", "-n", "20", "-i", "Once upon a time"});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out.rfind("Once upon a time", 0), 0u) << run.out;
}

// The RoPE mapping, directly: an f32 conversion stores every tensor (wq and wk included) with
// the bytes of the .bin, rows in the same order (format/gguf.h: no permutation either way).
TEST(GgufConvert, F32TensorsAreTheBinsBytes) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
  const std::string gguf = gguf_of("stories260K.bin", "tok512.bin", "f32");
  ASSERT_FALSE(gguf.empty());
  FileStorage a, b;
  ASSERT_TRUE(a.open(model_path("stories260K.bin").c_str(), "model").ok());
  ASSERT_TRUE(b.open(gguf.c_str(), "model").ok());
  ModelSpec sa, sb;
  ASSERT_TRUE(read_model_spec(a, &sa).ok());
  ASSERT_TRUE(read_model_spec(b, &sb).ok());
  int compared = 0;
  for (int i = 0; i < sa.tensor_count(); ++i) {
    const TensorInfo ta = sa.tensor(i);
    if (!ta.schema->gguf_name) continue;  // freq_cis: llama2.c v0 only
    const TensorInfo tb = sb.tensor(ta.role, ta.layer);
    ASSERT_EQ(ta.bytes(), tb.bytes()) << ta.schema->name;
    std::vector<unsigned char> va(static_cast<std::size_t>(ta.bytes())), vb(va.size());
    ASSERT_TRUE(a.read(ta.offset, va.data(), va.size()).ok());
    ASSERT_TRUE(b.read(tb.offset, vb.data(), vb.size()).ok());
    EXPECT_EQ(va, vb) << ta.schema->name << " layer " << ta.layer;
    ++compared;
  }
  EXPECT_EQ(compared, 1 + 9 * 5 + 1);  // embedding, 9 per layer x 5, final norm (shared classifier)
}

// The plan of a GGUF model (its own tokenizer included) is exactly the arena a run allocates.
TEST(GgufConvert, PlanEqualsTheArenaOfARun) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
  const std::string model = gguf_of("stories260K.bin", "tok512.bin", "q4_0");
  ASSERT_FALSE(model.empty());
  for (const std::string& k : available_kernel_names()) {
    const CommandResult plan = run_pocketlm({"plan", model, "--kernels", k});
    ASSERT_EQ(plan.exit_code, 0) << plan.err;
    EXPECT_NE(plan.out.find("tokenizer (the model's own)"), std::string::npos) << plan.out;
    const std::size_t at = plan.out.find("total (arena)");
    ASSERT_NE(at, std::string::npos) << plan.out;
    std::istringstream total(plan.out.substr(plan.out.find('|', at) + 1));
    unsigned long long bytes = 0;
    total >> bytes;
    const CommandResult run = run_pocketlm({"run", model, "-n", "8", "-t", "0", "--kernels", k});
    ASSERT_EQ(run.exit_code, 0) << run.err;
    EXPECT_NE(run.err.find("arena " + std::to_string(bytes) + " bytes"), std::string::npos) << k << ": " << run.err;
  }
}

}  // namespace
}  // namespace pocketlm::test
