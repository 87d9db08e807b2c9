// The FP-trap guard. A PSP's FPU traps on overflow, invalid and divide-by-zero (FCR31 = 0x0E00
// at power-on), and an emulator never does, so a build can pass every emulated run and still
// halt a console. glibc's feenableexcept(FE_OVERFLOW | FE_INVALID | FE_DIVBYZERO) makes x86 and
// qemu-mipsel trap on the same operations (../shared/design/device-fidelity.md, 2.4): with it
// on, every stories260K golden case (f32 and q80, greedy and sampled), synth15M's and the
// ESP32-shaped PLE model run to the end with the golden tokens; and a planted overflow in a
// kernel dies by SIGFPE, so the guard can fail. Where the FPU cannot trap (aarch64 returns -1)
// the tests skip, saying so.
#include <gtest/gtest.h>

#include <cfenv>
#include <csignal>
#include <cstdlib>
#include <string>
#include <vector>

#include "golden_models.h"
#include "pocketlm/kernels/kernels.h"
#include "pocketlm/runtime/session.h"
#include "ports/posix/file_storage.h"
#include "test_support.h"

namespace pocketlm {
namespace {

constexpr int kTraps = FE_OVERFLOW | FE_INVALID | FE_DIVBYZERO;

// Traps on while it lives (the PSP's FCR31); the flags raised before are cleared first.
class Traps {
 public:
  Traps() {
    std::feclearexcept(FE_ALL_EXCEPT);
    ok_ = feenableexcept(kTraps) != -1;
  }
  ~Traps() { fedisableexcept(kTraps); }
  bool ok() const { return ok_; }

 private:
  bool ok_ = false;
};

bool can_trap() {
  const int before = feenableexcept(kTraps);
  fedisableexcept(kTraps);
  return before != -1;
}

// The case's model and tokenizer through a Session with traps on: its prompt tokens, its
// sampler, its steps; the next tokens must be the golden ones.
void run_case(const nlohmann::json& c) {
  const std::string model_name = c["model"].get<std::string>(), tok = c["tokenizer"].get<std::string>();
  if (const std::string why = test::golden_inputs_missing(model_name, tok); !why.empty()) GTEST_SKIP() << why;
  const std::string path = test::golden_model_path(model_name);
  ASSERT_FALSE(path.empty()) << model_name;
  FileStorage model, tokenizer;
  ASSERT_TRUE(model.open(path.c_str(), "model").ok());
  ASSERT_TRUE(tokenizer.open(test::model_path(tok).c_str(), "tokenizer").ok());
  const std::vector<int> ids = c["prompt_tokens"].get<std::vector<int>>();
  const std::vector<std::int32_t> prompt(ids.begin(), ids.end());
  SamplerParams params;
  params.temperature = static_cast<float>(c["temperature"].get<double>());
  params.topp = static_cast<float>(c["topp"].get<double>());
  params.seed = c["seed"].get<std::uint64_t>();
  std::vector<int> next;
  Session session;
  {
    Traps traps;  // from opening (the load, the RoPE table) to the last token
    ASSERT_TRUE(traps.ok());
    ASSERT_TRUE(session.open(model, tokenizer, SessionOptions{}).ok());
    const int asked = c["steps"].get<int>();  // run.c: 0 or more than the context is the whole context
    const int steps = asked <= 0 || asked > session.seq_len() ? session.seq_len() : asked;
    ASSERT_TRUE(session.generate(prompt.data(), static_cast<int>(prompt.size()), steps, params, test::collect_tokens,
                                 &next, nullptr)
                    .ok());
  }
  EXPECT_EQ(next, c["next_tokens"].get<std::vector<int>>());
}

class FpTrapGolden : public ::testing::TestWithParam<std::string> {};

TEST_P(FpTrapGolden, RunsToTheEndWithTheGoldenTokens) {
  if (!can_trap()) GTEST_SKIP() << "this FPU does not trap (feenableexcept returns -1)";
  // Under qemu a synth15M case takes about a minute: one of them (the q80 smoke run) is enough.
  if (!test::emulator_prefix().empty() && GetParam().rfind("synth15M", 0) == 0 && GetParam() != "synth15Mq80_greedy")
    GTEST_SKIP() << GetParam() << ": native builds only (qemu runs synth15Mq80_greedy)";
  for (const nlohmann::json& c : test::golden_cases())
    if (c["name"] == GetParam()) return run_case(c);
  FAIL() << GetParam() << " is not in " << test::golden_runs_path();
}

// stories260K's cases in f32 and q80 (greedy, top-p, multinomial, the whole context, Unicode)
// and synth15M's; not the 42M and 110M shapes, whose weights take minutes under qemu.
std::vector<std::string> trap_cases() {
  std::vector<std::string> names;
  for (const nlohmann::json& c : test::golden_cases()) {
    const std::string model = c["model"].get<std::string>();
    if (model.rfind("synth42M", 0) != 0 && model.rfind("synth110M", 0) != 0) names.push_back(c["name"]);
  }
  return names;
}

INSTANTIATE_TEST_SUITE_P(Golden, FpTrapGolden, ::testing::ValuesIn(trap_cases()),
                         [](const auto& info) { return info.param; });

TEST(FpTrap, ThePleModelRunsToTheEnd) {
  if (!can_trap()) GTEST_SKIP() << "this FPU does not trap (feenableexcept returns -1)";
  POCKETLM_REQUIRE_FILES("models/tokenizer.bin");
  test::Esp32PleFiles files;
  ASSERT_FALSE(HasFailure());
  FileStorage& model = files.model;
  FileStorage& tokenizer = files.tokenizer;
  const std::int32_t prompt[] = {1, 9038, 2501, 263, 931};  // BOS "Once upon a time"
  for (float temperature : {0.0f, 1.0f}) {
    SCOPED_TRACE(temperature);
    std::vector<int> next;
    Session session;
    Traps traps;
    ASSERT_TRUE(traps.ok());
    ASSERT_TRUE(session.open(model, tokenizer, SessionOptions{}).ok());
    SamplerParams params;
    params.temperature = temperature;
    ASSERT_TRUE(session.generate(prompt, 5, 64, params, test::collect_tokens, &next, nullptr).ok());
    EXPECT_FALSE(next.empty());
  }
}

// A matmul whose products overflow, through the reference kernel with traps on; exits 0 only if
// nothing trapped.
void planted_overflow() {
  const std::vector<float> w(8, 1e20f), x(8, 1e20f);
  float out = 0.0f;
  Matrix m;
  m.rows = 1;
  m.cols = 8;
  m.values = w.data();
  Traps traps;
  reference_kernels().matmul[type_index(TensorType::kF32)](&out, m, Activation{x.data(), nullptr, 8, 0}, 1);
  std::exit(out > 0.0f ? 0 : 2);
}

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kAddressSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kAddressSanitizer = true;
#else
constexpr bool kAddressSanitizer = false;
#endif
#else
constexpr bool kAddressSanitizer = false;
#endif

// The guard can fail: the planted overflow is killed by SIGFPE. AddressSanitizer installs its
// own SIGFPE handler, which reports the fault ("AddressSanitizer: FPE") and exits with 1.
TEST(FpTrapDeathTest, APlantedOverflowInAKernelDies) {
  if (!can_trap()) GTEST_SKIP() << "this FPU does not trap (feenableexcept returns -1)";
  GTEST_FLAG_SET(death_test_style, "fast");  // fork only: qemu-user cannot exec the binary again
  if (kAddressSanitizer) {
    EXPECT_EXIT(planted_overflow(), ::testing::ExitedWithCode(1), "AddressSanitizer: FPE");
  } else {
    EXPECT_EXIT(planted_overflow(), ::testing::KilledBySignal(SIGFPE), "");
  }
}

}  // namespace
}  // namespace pocketlm
