// `pocketlm convert IN.gguf --to q80` from GGUF inputs of every type pocketlm reads: each
// tensor is dequantized by its own type before q80 quantization (it used to be read as 4-byte
// floats: "read past the end", or a silent garbage model). The q80 output holds exactly what
// q80-quantizing the dequantized source gives, and it runs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "pocketlm/format/model_reader.h"
#include "pocketlm/quant/q80.h"
#include "pocketlm/quant/tensor_type.h"
#include "ports/posix/file_storage.h"
#include "golden_models.h"
#include "test_support.h"

namespace pocketlm::test {
namespace {

struct Opened {
  FileStorage file;
  ModelSpec spec;
};

void open_model(const std::string& path, Opened* o) {
  ASSERT_TRUE(o->file.open(path.c_str(), "model").ok()) << path;
  const Status st = read_model_spec(o->file, &o->spec);
  ASSERT_TRUE(st.ok()) << st.message();
}

// Every value of a tensor as f32, dequantized by its type.
std::vector<float> dequantized(Storage& file, const TensorInfo& t) {
  std::vector<unsigned char> values(static_cast<std::size_t>(t.value_bytes));
  std::vector<float> scales(static_cast<std::size_t>(t.scale_bytes / sizeof(float)) + 1);
  EXPECT_TRUE(file.read(t.offset, values.data(), values.size()).ok());
  if (t.scale_bytes) EXPECT_TRUE(file.read(t.scales_offset(), scales.data(), static_cast<std::size_t>(t.scale_bytes)).ok());
  std::vector<float> out(static_cast<std::size_t>(t.numel()));
  type_traits(t.type).dequantize(values.data(), t.scale_bytes ? scales.data() : nullptr, static_cast<int>(out.size()),
                                 t.group, out.data());
  return out;
}

TEST(ConvertQ80, GgufOfEveryTypeGivesTheQ80OfItsDequantizedWeightsAndRuns) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
  for (const char* type : {"f16", "q8_0", "q4_0"}) {
    SCOPED_TRACE(type);
    const std::string gguf = stories260k_gguf(type), q80 = temp_dir() + "/" + type + "_q80.bin";
    const CommandResult c = run_pocketlm({"convert", gguf, "--to", "q80", "-o", q80});
    ASSERT_EQ(c.exit_code, 0) << c.err;
    Opened src, dst;
    open_model(gguf, &src);
    open_model(q80, &dst);
    ASSERT_EQ(dst.spec.format, ModelFormat::kLlama2cV2);
    const int gs = dst.spec.group_size;
    for (int i = 0; i < dst.spec.tensor_count(); ++i) {
      const TensorInfo out = dst.spec.tensor(i);
      const TensorInfo in = src.spec.tensor(out.role, out.layer);
      SCOPED_TRACE(std::string(out.schema->name) + " layer " + std::to_string(out.layer));
      const std::vector<float> source = dequantized(src.file, in), written = dequantized(dst.file, out);
      ASSERT_EQ(written.size(), source.size());
      std::vector<float> expected = source;
      if (out.type == TensorType::kQ80) {  // the matrices: quantized as the converter must
        std::vector<std::int8_t> q(source.size());
        std::vector<float> s(source.size() / static_cast<std::size_t>(gs));
        quantize_q80_weights(source.data(), source.size(), gs, q.data(), s.data());
        dequantize_q80(q.data(), s.data(), static_cast<int>(q.size()), gs, expected.data());
      }
      EXPECT_TRUE(written == expected);
    }
    const CommandResult r = run_pocketlm({"run", q80, "-z", model_path("tok512.bin"), "-n", "24", "-t", "0"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("Once upon a time"), std::string::npos) << r.out;
  }
}

// An f32 GGUF holds the .bin's own floats: its q80 is llama2.c's exported q80 file byte for byte.
TEST(ConvertQ80, F32GgufConvertsToTheSharedQ80File) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
  const std::string q80 = temp_dir() + "/f32_q80.bin";
  const CommandResult c = run_pocketlm({"convert", stories260k_gguf("f32"), "--to", "q80", "-o", q80});
  ASSERT_EQ(c.exit_code, 0) << c.err;
  EXPECT_EQ(sha256_of(q80), pinned_sha256("stories260K_q80.bin"));
}

// A v2 header implies run.c's eps 1e-5: a GGUF whose eps differs is refused, not rewritten.
TEST(ConvertQ80, GgufWithAnotherRmsEpsIsRefused) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
  std::vector<unsigned char> bytes = read_file(stories260k_gguf("f32"));
  const std::string key = "llama.attention.layer_norm_rms_epsilon";
  const auto at = std::search(bytes.begin(), bytes.end(), key.begin(), key.end());
  ASSERT_NE(at, bytes.end());
  const float eps = 1e-6f;
  std::memcpy(&*(at + static_cast<std::ptrdiff_t>(key.size()) + 4), &eps, 4);  // after the u32 type
  const std::string dir = temp_dir(), gguf = dir + "/eps.gguf", q80 = dir + "/eps_q80.bin";
  write_file(gguf, bytes);
  const CommandResult r = run_pocketlm({"convert", gguf, "--to", "q80", "-o", q80});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err.rfind("pocketlm: error: " + gguf + ": rms_eps = 0.000001", 0), 0u) << r.err;
  EXPECT_FALSE(file_exists(q80));
}

}  // namespace
}  // namespace pocketlm::test
