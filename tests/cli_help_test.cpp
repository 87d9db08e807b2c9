// --help tells the truth: every value is typed (FLOAT, INT, SIZE, FILE, ...; TEXT only for
// the prompts) and closed sets list their choices, the kernel backends among them. And the
// run summary reports what it measured: the arena, and "n/a" for a phase with no pass.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "pocketlm/kernels/kernels.h"
#include "test_support.h"

namespace pocketlm::test {
namespace {

TEST(CliHelp, EveryValueIsTypedAndChoicesAreListed) {
  std::string backends;
  for (const char* const* name = kernel_names(); *name; ++name) backends += (backends.empty() ? "" : "|") + std::string(*name);
  const std::vector<std::pair<std::string, std::vector<std::string>>> commands = {
      {"run", {"-t FLOAT", "-p FLOAT", "-s INT", "-n INT", "-z FILE", "-m generate|chat", "--heap SIZE",
               "--seq-len INT", "--kernels " + backends, "--threads INT", "--token-log FILE", "-y TEXT"}},
      {"plan", {"-z FILE", "--heap SIZE", "--seq-len INT", "--kernels " + backends, "--threads INT"}},
      {"bench", {"-z FILE", "-n INT", "--heap SIZE", "--kernels " + backends, "--repeats INT"}},
      {"inspect", {"model FILE"}},
      {"synth", {"stories260K|stories15M|stories42M|stories110M", "--seed INT", "-o FILE"}},
      {"convert", {"input FILE", "--to q80|gguf", "--type f32|f16|q8_0|q4_0|iq4_xs", "-z FILE", "--group-size INT", "-o FILE"}},
      {"eval", {"model FILE", "text FILE", "-z FILE", "--against FILE", "--split heldout|all", "--split-seed INT",
                "--stories INT", "--seq-len INT", "--stride INT", "--kernels " + backends, "--threads INT"}},
      {"chat", {"model FILE", "-z FILE", "-t FLOAT", "-p FLOAT", "-s INT", "-n INT", "-i TEXT", "-y TEXT",
                "--template none|llama2", "--seq-len INT", "--kv f32|f16", "--heap SIZE", "--kernels " + backends,
                "--threads INT"}},
      {"console", {"model FILE", "--osk FILE", "--png FILE", "--device psp|psp-2000|esp32s3", "-z FILE", "-t FLOAT", "-n INT",
                   "--template none|llama2", "--seq-len INT", "--kernels " + backends}},
  };
  for (const auto& [command, needles] : commands) {
    SCOPED_TRACE(command);
    const CommandResult r = run_pocketlm({command, "--help"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    for (const std::string& n : needles) EXPECT_NE(r.out.find(n), std::string::npos) << "missing '" << n << "'";
    // TEXT is the type of free text only: the prompts.
    std::istringstream lines(r.out);
    std::string line;
    while (std::getline(lines, line))
      if (line.find(" TEXT") != std::string::npos)
        EXPECT_TRUE(line.rfind("  -i TEXT", 0) == 0 || line.rfind("  -y TEXT", 0) == 0) << line;
  }
}

TEST(CliSummary, BosOnlyPromptHasNoPrefillRate) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
  const CommandResult r = run_pocketlm(
      {"run", model_path("stories260K.bin"), "-z", model_path("tok512.bin"), "-n", "8", "-s", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("prompt 1 token, generated "), std::string::npos) << r.err;  // singular
  EXPECT_NE(r.err.find(", prefill n/a, decode "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(" tok/s, arena "), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("model memory"), std::string::npos) << r.err;
}

// A v1 checkpoint of one layer, one head, head size 2 and seq_len 1 (zero weights): the plan
// says "1 layer", "1 head", "1 token", "1 position", "1 angle", never "1 layers".
TEST(CliSummary, PlanCountsOfOneAreSingular) {
  POCKETLM_REQUIRE_FILES("models/tok512.bin");
  std::vector<unsigned char> bytes;
  put_i32(bytes, 0x616b3432);  // llama2.c v1 magic
  put_i32(bytes, 1);
  for (std::int32_t d : {2, 1, 1, 1, 1, 512, 1}) put_i32(bytes, d);  // dim hidden layers heads kv vocab seq
  bytes.push_back(1);  // shared classifier
  bytes.resize(256 + 4 * ((2 + 2 + 16 + 6) + 2 + 512 * 2), 0);
  const std::string path = temp_dir() + "/one-layer.bin";
  write_file(path, bytes);
  const CommandResult r = run_pocketlm({"plan", path, "-z", model_path("tok512.bin")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* part : {", 1 layer, 1 head, 1 kv head, vocab 512", "wq wk wv wo x 1 layer, ",
                           "w1 w2 w3 x 1 layer (hidden_dim 1)", "K and V: 1 layer x 1 token x kv_dim 2",
                           "RoPE cos and sin: 1 position x 1 angle x f32"})
    EXPECT_NE(r.out.find(part), std::string::npos) << "missing '" << part << "' in\n" << r.out;
}

TEST(CliSummary, PromptThatFillsStepsHasNoDecodeRate) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
  const CommandResult r = run_pocketlm({"run", model_path("stories260K.bin"), "-z", model_path("tok512.bin"), "-n",
                                        "3", "-s", "1", "-i", "Once upon a time, there was"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("generated 0 tokens, prefill "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(" tok/s, decode n/a, arena "), std::string::npos) << r.err;
}

}  // namespace
}  // namespace pocketlm::test
