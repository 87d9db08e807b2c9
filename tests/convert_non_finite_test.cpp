// `pocketlm convert` refuses a NaN or infinite weight in its input (it used to quantize it
// into an ordinary number: a NaN in an F16 GGUF became a normal q4_0 value): one line naming
// the input file, the tensor and the element index, exit 1, and no output file.
#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "pocketlm/format/model_reader.h"
#include "pocketlm/quant/fp16.h"
#include "ports/posix/file_storage.h"
#include "test_support.h"

namespace pocketlm::test {
namespace {

// The file offset of a tensor's values.
std::uint64_t offset_of(const std::string& path, TensorRole role, int layer) {
  FileStorage f;
  EXPECT_TRUE(f.open(path.c_str(), "model").ok());
  ModelSpec spec;
  EXPECT_TRUE(read_model_spec(f, &spec).ok());
  return spec.tensor(role, layer).offset;
}

// A copy of `path` in a fresh directory with `bytes` written at `at`.
std::string patched(const std::string& path, std::uint64_t at, const std::vector<unsigned char>& bytes) {
  std::vector<unsigned char> data = read_file(path);
  std::memcpy(data.data() + at, bytes.data(), bytes.size());
  const std::string out = temp_dir() + "/in" + path.substr(path.find_last_of('.'));
  write_file(out, data);
  return out;
}

std::vector<unsigned char> half(std::uint16_t h) { return {static_cast<unsigned char>(h), static_cast<unsigned char>(h >> 8)}; }

// Both targets refuse `in` with exactly `message` after "pocketlm: error: IN: ", writing nothing.
void expect_refused(const std::string& in, const std::string& message) {
  const std::string dir = in.substr(0, in.find_last_of('/'));
  for (const std::vector<std::string>& target :
       {std::vector<std::string>{"--to", "q80"}, std::vector<std::string>{"--to", "gguf", "--type", "q4_0"}}) {
    std::vector<std::string> args = {"convert", in};
    args.insert(args.end(), target.begin(), target.end());
    args.insert(args.end(), {"-o", dir + "/out"});
    const CommandResult r = run_pocketlm(args);
    EXPECT_EQ(r.exit_code, 1) << target[1];
    EXPECT_EQ(r.err, "pocketlm: error: " + in + ": " + message + "\n") << target[1];
    EXPECT_TRUE(r.out.empty()) << r.out;
    EXPECT_EQ(directory_entries(dir).size(), 1u) << "output left behind";
  }
}

TEST(ConvertNonFinite, NaNInAnF16Gguf) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
  const std::string f16 = stories260k_gguf("f16");
  const std::string in = patched(f16, offset_of(f16, TensorRole::kWq, 1) + 2 * 7, half(0x7E00));
  expect_refused(in, "tensor blk.1.attn_q.weight element 7 is NaN; convert refuses non-finite weights");
}

// An infinite Q8_0 block scale: the block's first element is named.
TEST(ConvertNonFinite, InfiniteScaleInAQ8_0Gguf) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
  const std::string q8 = stories260k_gguf("q8_0");
  const std::string in = patched(q8, offset_of(q8, TensorRole::kWv, 0) + 34 * 3, half(0x7C00));
  expect_refused(in, "tensor blk.0.attn_v.weight element 96 is +inf; convert refuses non-finite weights");
}

TEST(ConvertNonFinite, InfinityInAnF32Checkpoint) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin");
  const std::string bin = model_path("stories260K.bin");
  const float inf = -std::numeric_limits<float>::infinity();
  std::vector<unsigned char> bytes(4);
  std::memcpy(bytes.data(), &inf, 4);
  const std::string in = patched(bin, offset_of(bin, TensorRole::kW2, 2) + 4 * 100, bytes);
  expect_refused(in, "tensor w2 (layer 2) element 100 is -inf; convert refuses non-finite weights");
}

}  // namespace
}  // namespace pocketlm::test
