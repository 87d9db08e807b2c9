// The per-layer-embedding model shipped in assets/ (docs/ple.md, `v4096-ple`): the pinned file, a
// pocketlm-ple model of 4,096 pieces with its own tokenizer, that `run` continues greedily with
// the pinned text on every backend and `eval` scores at the README's bits per byte.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "pocketlm/format/model_reader.h"
#include "pocketlm/format/ple_schema.h"
#include "pocketlm/format/tensor_role.h"
#include "ports/posix/file_storage.h"
#include "golden_models.h"
#include "test_support.h"

namespace pocketlm {
namespace {

const std::string kPle = std::string(POCKETLM_SOURCE_DIR) + "/assets/v4096-ple-q8_0.gguf";
// `python3 -m train.run v4096-ple` (deterministic: its F32 model.gguf is sha256 ed60d29f...2862),
// then its model-q8_0.gguf: `pocketlm convert model.gguf --to gguf --type q8_0`.
constexpr const char* kPleSha256 = "e2cc78183f740469b9de1068c6a576ef9a29ec78050962d22031171f15fb837f";

TEST(ShippedModels, ThePleModelIsThePinnedFile) {
  EXPECT_EQ(test::sha256_of(kPle), kPleSha256);
  FileStorage file;
  ASSERT_TRUE(file.open(kPle.c_str(), "model").ok());
  ModelSpec spec;
  const Status st = read_model_spec(file, &spec);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_STREQ(spec.architecture, "pocketlm-ple");
  EXPECT_EQ(spec.config.vocab_size, 4096);
  EXPECT_EQ(per_layer_dim(spec.config), 64);
  EXPECT_EQ(spec.type(kPleTable), TensorType::kQ8_0);
  EXPECT_TRUE(spec.tokenizer.present);  // runs without -z
}

TEST(ShippedModels, RunContinuesThePromptWithThePinnedTextOnEveryBackend) {
  const std::string want =
      "Once upon a time, there was a little girl named Lily. She loved to play outside in the park. One day, she "
      "went to the park to play with her friends. They saw a big, red ball and a big, red\n";
  for (const std::string& kernels : test::available_kernel_names()) {
    SCOPED_TRACE(kernels);
    const test::CommandResult r =
        test::run_pocketlm({"run", kPle, "-t", "0", "-n", "48", "-i", "Once upon a time", "--kernels", kernels});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, want);
  }
}

TEST(ShippedModels, EvalScoresTheValidationSampleAsTheReadmeSays) {
  POCKETLM_REQUIRE_FILES("data/tinystories-valid-sample.txt");
  const test::CommandResult r =
      test::run_pocketlm({"eval", kPle, test::find_file("data/tinystories-valid-sample.txt")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto at = r.out.find("bits per byte  ");
  ASSERT_NE(at, std::string::npos) << r.out;
  EXPECT_NEAR(std::strtod(r.out.c_str() + at + 15, nullptr), 1.110939, 5e-7) << r.out;
}

}  // namespace
}  // namespace pocketlm
