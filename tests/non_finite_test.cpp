// Non-finite weights are refused while they stream in, with one line naming the tensor, the
// layer and the element; logits that overflow stop generation with the position instead of
// sampling garbage (stories260K copies with one float changed).
#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "test_support.h"

namespace pocketlm {
namespace {

constexpr int kDim = 64, kHidden = 172, kLayers = 5, kKvDim = 32, kVocab = 512;

std::string patched(const std::string& model, std::size_t offset, const std::vector<float>& values) {
  auto bytes = test::read_file(test::model_path(model));
  EXPECT_LE(offset + values.size() * 4, bytes.size());
  std::memcpy(bytes.data() + offset, values.data(), values.size() * 4);
  const std::string path = test::temp_dir() + "/patched.bin";
  test::write_file(path, bytes);
  return path;
}

void expect_one_line_error(const std::string& path, const std::vector<std::string>& parts) {
  for (const char* kernels : {"reference", "tiled4"}) {
    const auto r = test::run_pocketlm({"run", path, "-z", test::model_path("tok512.bin"), "-n", "8", "-t", "0",
                                       "--kernels", kernels});
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_EQ(r.out, "");
    ASSERT_FALSE(r.err.empty());
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
    for (const auto& p : parts) EXPECT_NE(r.err.find(p), std::string::npos) << "missing '" << p << "' in " << r.err;
  }
}

const float kNan = std::numeric_limits<float>::quiet_NaN();
const float kInf = std::numeric_limits<float>::infinity();

// llama2.c v0 order: token_embedding, rms_att, wq, wk, wv, wo, rms_ffn, w1, w2, w3, rms_final.
constexpr std::size_t kEmbedding = 28;
constexpr std::size_t kRmsAtt = kEmbedding + std::size_t{kVocab} * kDim * 4;
constexpr std::size_t kWq = kRmsAtt + std::size_t{kLayers} * kDim * 4;

TEST(NonFiniteWeights, NanInTheTokenEmbedding) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
  expect_one_line_error(patched("stories260K.bin", kEmbedding + 4 * 1000, {kNan}),
                        {"patched.bin", "tensor token_embedding", "element 1000", "NaN"});
}

TEST(NonFiniteWeights, InfinityInLayerOnesWq) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
  // Row 9, column 3 of layer 1: inside the interleaved blocks of tiled4 and in the row-major
  // tail of no backend, so the check sees the rows before they are repacked.
  expect_one_line_error(patched("stories260K.bin", kWq + std::size_t{kDim} * kDim * 4 + (9 * kDim + 3) * 4, {-kInf}),
                        {"tensor wq (layer 1)", "element 579", "-inf"});
}

TEST(NonFiniteWeights, NanInANorm) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
  expect_one_line_error(patched("stories260K.bin", kRmsAtt + std::size_t{kDim} * 4 * 4 + 4 * 7, {kNan}),
                        {"tensor rms_att (layer 4)", "element 7", "NaN"});
}

TEST(NonFiniteWeights, NanInAQ80Scale) {
  POCKETLM_REQUIRE_FILES("models/stories260K_q80.bin", "models/tok512.bin");
  // v2: 256-byte header, norms (f32), then the token embedding's int8 values and fp32 scales
  // (group size 4).
  const std::size_t norms = (2 * std::size_t{kLayers} + 1) * kDim * 4;
  const std::size_t scales = 256 + norms + std::size_t{kVocab} * kDim;
  expect_one_line_error(patched("stories260K_q80.bin", scales + 4 * 3, {kInf}),
                        {"tensor token_embedding", "+inf scale for elements 12..15"});
}

TEST(NonFiniteWeights, UnusedFreqCisTablesAreNotChecked) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
  // v0's RoPE tables are skipped (pocketlm computes RoPE), so a NaN there changes nothing.
  const auto bytes = test::read_file(test::model_path("stories260K.bin"));
  const std::string path = patched("stories260K.bin", bytes.size() - 8, {kNan});
  const auto r = test::run_pocketlm({"run", path, "-z", test::model_path("tok512.bin"), "-n", "8", "-t", "0"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

TEST(NonFiniteWeights, AStreamedBlockIsCheckedToo) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
  // Under --heap 5M (4 MiB of it the program's, so a 1 MiB arena) the last layers stay in
  // the model file and are read every token: a NaN in layer 4's w1 is found when its block
  // arrives, and generation stops on it (resident, the load finds it).
  const std::size_t w1 = kWq + std::size_t{kLayers} * (2 * kDim * kDim + 2 * kDim * kKvDim) * 4 +
                         std::size_t{kLayers} * kDim * 4 + std::size_t{4} * kHidden * kDim * 4;
  const std::string path = patched("stories260K.bin", w1 + 4 * 100, {kNan});
  const auto resident = test::run_pocketlm({"run", path, "-z", test::model_path("tok512.bin"), "-n", "8", "-t", "0"});
  EXPECT_EQ(resident.exit_code, 1);
  EXPECT_NE(resident.err.find("tensor w1 (layer 4) element 100 is NaN"), std::string::npos) << resident.err;
  const auto r = test::run_pocketlm({"run", path, "-z", test::model_path("tok512.bin"), "-n", "8", "-t", "0",
                                     "--heap", "5120K"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("tensor w1 (layer 4) element 100 is not finite"), std::string::npos) << r.err;
}

TEST(NonFiniteLogits, OverflowStopsWithThePosition) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
  // rms_final of 3e38: finite weights whose product overflows to inf at the first position.
  const std::size_t rms_final = kWq + std::size_t{kLayers} * (2 * kDim * kDim + 2 * kDim * kKvDim) * 4 +
                                std::size_t{kLayers} * kDim * 4 + std::size_t{kLayers} * 3 * kHidden * kDim * 4;
  const std::string path = patched("stories260K.bin", rms_final, std::vector<float>(kDim, 3e38f));
  const auto r = test::run_pocketlm({"run", path, "-z", test::model_path("tok512.bin"), "-n", "8", "-t", "0"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("logits at position 0 are not finite"), std::string::npos) << r.err;
  // The chat stops the same way, after the message's prefill (positions 0..4).
  const std::string input = test::temp_dir() + "/in.txt";
  const std::string line = "Once upon a time\n";
  test::write_file(input, std::vector<unsigned char>(line.begin(), line.end()));
  const auto c =
      test::run_pocketlm_with_input({"chat", path, "-z", test::model_path("tok512.bin"), "-n", "8", "-t", "0"}, input);
  EXPECT_EQ(c.exit_code, 1);
  EXPECT_NE(c.err.find("logits at position 4 are not finite"), std::string::npos) << c.err;
}

}  // namespace
}  // namespace pocketlm
