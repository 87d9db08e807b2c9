// Hostile checkpoint headers: every bad header is a one-line kBadFormat error naming the
// file, the field and the value (never a crash or an overflowed size), and valid v0/v1/v2
// headers lay their tensors out where the format says (offsets computed by hand below).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "pocketlm/format/model_reader.h"
#include "pocketlm/format/llama2c_reader.h"
#include "ports/posix/file_storage.h"
#include "pocketlm/io/memory_storage.h"
#include "test_support.h"

namespace pocketlm {
namespace {

using test::put_i32;
using Bytes = std::vector<unsigned char>;

// dim, hidden_dim, n_layers, n_heads, n_kv_heads, vocab_size, seq_len.
struct Dims {
  std::int32_t v[7];
};

// A small valid shape: head_size 4, kv_dim 4, GQA 2:1.
constexpr Dims kSmall = {{8, 12, 2, 2, 1, 10, 4}};
constexpr const char* kFieldNames[7] = {"dim", "hidden_dim", "n_layers", "n_heads", "n_kv_heads", "vocab_size",
                                        "seq_len"};

Dims with(Dims d, int field, std::int32_t value) {
  d.v[field] = value;
  return d;
}

// Header bytes only; `body` zero bytes follow.
Bytes v0(const Dims& d, std::size_t body = 0) {
  Bytes out;
  for (std::int32_t x : d.v) put_i32(out, x);
  out.resize(out.size() + body, 0);
  return out;
}

Bytes v1v2(std::int32_t version, const Dims& d, unsigned char shared, std::int32_t group_size, std::size_t body) {
  Bytes out;
  put_i32(out, static_cast<std::int32_t>(kLlama2cMagic));
  put_i32(out, version);
  for (std::int32_t x : d.v) put_i32(out, x);
  out.push_back(shared);               // byte 36
  if (version == 2) put_i32(out, group_size);  // bytes 37..40, unaligned
  out.resize(256 + body, 0);
  return out;
}
Bytes v1(const Dims& d, unsigned char shared = 1, std::size_t body = 0) { return v1v2(1, d, shared, 0, body); }
Bytes v2(const Dims& d, std::int32_t gs, unsigned char shared = 1, std::size_t body = 0) {
  return v1v2(2, d, shared, gs, body);
}

// File sizes of kSmall, counted by hand from the format description (floats unless noted):
// v0: tok 10*8=80, rms_att 2*8=16, wq 2*64=128, wk 2*32=64, wv 64, wo 128, rms_ffn 16,
//     w1 2*96=192, w2 192, w3 192, rms_final 8, freq_cis_real 4*2=8, freq_cis_imag 8
//     = 1096 floats = 4384 bytes + 28 header; wcls adds 80 floats = 320 bytes.
constexpr std::size_t kV0Shared = 28 + 4384;          // 4412
constexpr std::size_t kV0Unshared = kV0Shared + 320;  // 4732
// v1: 256 header + the same minus freq_cis (64 bytes) = 4576; wcls adds 320.
constexpr std::size_t kV1Unshared = 256 + 4320 + 320;  // 4896
// v2 (GS 4): norms 64+64+32 fp32 = 160; then int8 + scales (numel/4 * 4 bytes = numel):
// tok 160, wq 2*128, wk 2*64, wv 2*64, wo 2*128, w1 2*192, w2 2*192, w3 2*192 = 2080;
// wcls adds 160.
constexpr std::size_t kV2Shared = 256 + 160 + 2080;  // 2496
constexpr std::size_t kV2Unshared = kV2Shared + 160;  // 2656

struct Parsed {
  Status status;
  ModelSpec spec;
};

Parsed parse(const Bytes& bytes) {
  MemoryStorage storage(bytes.data(), bytes.size(), "model.bin");
  Parsed p;
  p.status = read_model_spec(storage, &p.spec);
  return p;
}

// ---- Bad headers: one table row per error -----------------------------------------------------

struct BadCase {
  std::string name;
  Bytes bytes;
  std::vector<std::string> needles;  // field and value as they must appear (the file name is implied)
};

void PrintTo(const BadCase& c, std::ostream* os) { *os << c.name; }

Bytes truncated(Bytes b, std::size_t size) {
  b.resize(size);
  return b;
}

std::vector<BadCase> bad_cases() {
  std::vector<BadCase> cases = {
      {"TruncatedHeaderV0", truncated(v0(kSmall), 20), {"20 bytes", "28"}},
      {"TruncatedHeaderV1", truncated(v1(kSmall), 100), {"100 bytes", "256-byte header"}},
      {"TruncatedMidTensor", v0(kSmall, 1000 - 28), {"truncated", "4412 bytes", "has 1000"}},
      {"OneByteShort", v0(kSmall, 4412 - 28 - 1), {"truncated", "4412 bytes", "has 4411"}},
      {"OneByteExtra", v0(kSmall, 4412 - 28 + 1), {"1 extra byte(s) after the last tensor", "4412", "has 4413"}},
      {"UnknownVersion", v1v2(7, kSmall, 1, 0, 0), {"version = 7", "not supported"}},
      {"WrongMagic", [] { Bytes b = v1(kSmall); b[3] = '3'; return b; }(), {"unknown magic 0x336b3432", "0x616b3432"}},
      {"DimNotMultipleOfHeads", v0(with(with(kSmall, 0, 8), 3, 3)), {"dim = 8", "n_heads = 3"}},
      {"HeadsNotMultipleOfKvHeads", v0(with(with(with(kSmall, 0, 16), 3, 4), 4, 3)),
       {"n_kv_heads = 3", "n_heads = 4"}},
      {"KvHeadsAboveHeads", v0(with(with(kSmall, 3, 2), 4, 4)), {"n_kv_heads = 4", "n_heads = 2"}},
      {"OddHeadSize", v0(with(with(with(kSmall, 0, 6), 3, 2), 4, 2)), {"head_size", "= 3", "odd"}},
      {"SharedClassifierFlag2", v1(kSmall, 2), {"shared_classifier = 2", "0 or 1"}},
      {"GroupSizeZero", v2(kSmall, 0), {"group_size = 0", "positive"}},
      {"GroupSizeNegative", v2(kSmall, -4), {"group_size = -4", "positive"}},
      {"GroupSizeNotDividingDim", v2(kSmall, 3), {"group_size = 3", "dim = 8"}},
      {"GroupSizeNotDividingHiddenDim", v2(kSmall, 8), {"group_size = 8", "hidden_dim = 12"}},
      // wq alone is 512 layers x 2^30 x 2^30 x 4 bytes.
      {"ByteSizeOverflows64Bits", v0(Dims{{1 << 30, 1 << 30, 512, 1 << 29, 1 << 29, 1, 1}}),
       {"overflows 64 bits", "dim 1073741824", "n_layers 512"}},
      {"MoreLayersThanPocketlmRuns", v0(with(kSmall, 2, 513)), {"n_layers = 513", "above 512"}},
      {"VocabInt32MinV0", v0(with(kSmall, 5, INT32_MIN)), {"vocab_size = -2147483648", "must be positive"}},
  };
  // Each of the seven fields: zero (v0) and negative (v1, where a negative vocab_size has no
  // meaning; in v0 it marks an unshared classifier).
  for (int f = 0; f < 7; ++f) {
    cases.push_back({std::string("Zero_") + kFieldNames[f], v0(with(kSmall, f, 0)),
                     {std::string(kFieldNames[f]) + " = 0", "must be positive"}});
    cases.push_back({std::string("Negative_") + kFieldNames[f], v1(with(kSmall, f, -3)),
                     {std::string(kFieldNames[f]) + " = -3", "must be positive"}});
  }
  return cases;
}

class BadHeader : public ::testing::TestWithParam<BadCase> {};

TEST_P(BadHeader, OneLineErrorNamingFileFieldAndValue) {
  const BadCase& c = GetParam();
  const Parsed p = parse(c.bytes);
  ASSERT_FALSE(p.status.ok());
  const std::string msg = p.status.message();
  EXPECT_EQ(p.status.code(), StatusCode::kBadFormat) << msg;
  EXPECT_EQ(msg.rfind("model.bin: ", 0), 0u) << msg;
  EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  for (const auto& n : c.needles) EXPECT_NE(msg.find(n), std::string::npos) << "missing '" << n << "' in: " << msg;
}

INSTANTIATE_TEST_SUITE_P(Llama2c, BadHeader, ::testing::ValuesIn(bad_cases()),
                         [](const ::testing::TestParamInfo<BadCase>& info) { return info.param.name; });

// ---- Valid headers and their layouts --------------------------------------------------------------

// The seven header fields in file order: dim, hidden_dim, n_layers, n_heads, n_kv_heads,
// vocab_size, seq_len.
void expect_config(const ModelConfig& c, const std::vector<int>& fields) {
  EXPECT_EQ((std::vector<int>{c.dim, c.hidden_dim, c.n_layers, c.n_heads, c.n_kv_heads, c.vocab_size, c.seq_len}),
            fields);
}

void expect_small_config(const ModelConfig& c) { expect_config(c, {8, 12, 2, 2, 1, 10, 4}); }

TEST(ValidHeader, V0SharedClassifier) {
  const Parsed p = parse(v0(kSmall, kV0Shared - 28));
  ASSERT_TRUE(p.status.ok()) << p.status.message();
  expect_small_config(p.spec.config);
  EXPECT_EQ(p.spec.format, ModelFormat::kLlama2cV0);
  EXPECT_TRUE(p.spec.shared_classifier);
  EXPECT_FALSE(p.spec.has(TensorRole::kWcls));
  EXPECT_EQ(p.spec.file_bytes, kV0Shared);
  // token_embedding 320 bytes, rms_att 64, wq 256 per layer, wk/wv 128, wo 256, rms_ffn 64,
  // w1/w2/w3 384 per layer, rms_final 32, freq_cis 32 + 32.
  EXPECT_EQ(p.spec.tensor(TensorRole::kTokenEmbedding, -1).offset, 28u);
  EXPECT_EQ(p.spec.tensor(TensorRole::kRmsAtt, 1).offset, 28u + 320 + 32);
  EXPECT_EQ(p.spec.tensor(TensorRole::kWq, 1).offset, 668u);
  EXPECT_EQ(p.spec.tensor(TensorRole::kWk, 0).offset, 924u);
  EXPECT_EQ(p.spec.tensor(TensorRole::kWv, 1).offset, 1180u + 128);
  EXPECT_EQ(p.spec.tensor(TensorRole::kW2, 1).offset, 3164u);
  EXPECT_EQ(p.spec.tensor(TensorRole::kRmsFinal, -1).offset, 4316u);
  EXPECT_EQ(p.spec.tensor(TensorRole::kFreqCisImag, -1).offset, 4380u);
}

TEST(ValidHeader, V0NegativeVocabMeansUnsharedClassifier) {
  const Parsed p = parse(v0(with(kSmall, 5, -10), kV0Unshared - 28));
  ASSERT_TRUE(p.status.ok()) << p.status.message();
  expect_small_config(p.spec.config);
  EXPECT_FALSE(p.spec.shared_classifier);
  const TensorInfo wcls = p.spec.tensor(TensorRole::kWcls, -1);
  EXPECT_EQ(wcls.offset, 4412u);
  EXPECT_EQ(wcls.bytes(), 320u);
  EXPECT_EQ(p.spec.file_bytes, kV0Unshared);
  // The same header with a shared-size body is now one classifier short.
  EXPECT_FALSE(parse(v0(with(kSmall, 5, -10), kV0Shared - 28)).status.ok());
}

TEST(ValidHeader, V1Unshared) {
  const Parsed p = parse(v1(kSmall, 0, kV1Unshared - 256));
  ASSERT_TRUE(p.status.ok()) << p.status.message();
  expect_small_config(p.spec.config);
  EXPECT_EQ(p.spec.format, ModelFormat::kLlama2cV1);
  EXPECT_FALSE(p.spec.shared_classifier);
  EXPECT_FALSE(p.spec.has(TensorRole::kFreqCisReal));
  // rms_att 256, rms_ffn 320, rms_final 384, token_embedding 416, wq 736 (256 per layer),
  // wk 1248 (128), wv 1504, wo 1760, w1 2272 (384), w2 3040, w3 3808, wcls 4576.
  EXPECT_EQ(p.spec.tensor(TensorRole::kRmsAtt, 0).offset, 256u);
  EXPECT_EQ(p.spec.tensor(TensorRole::kRmsFfn, 1).offset, 320u + 32);
  EXPECT_EQ(p.spec.tensor(TensorRole::kRmsFinal, -1).offset, 384u);
  EXPECT_EQ(p.spec.tensor(TensorRole::kTokenEmbedding, -1).offset, 416u);
  EXPECT_EQ(p.spec.tensor(TensorRole::kWq, 1).offset, 736u + 256);
  EXPECT_EQ(p.spec.tensor(TensorRole::kWo, 0).offset, 1760u);
  EXPECT_EQ(p.spec.tensor(TensorRole::kW3, 1).offset, 3808u + 384);
  EXPECT_EQ(p.spec.tensor(TensorRole::kWcls, -1).offset, 4576u);
  EXPECT_EQ(p.spec.file_bytes, kV1Unshared);
}

TEST(ValidHeader, V2SharedGroupSize4) {
  const Parsed p = parse(v2(kSmall, 4, 1, kV2Shared - 256));
  ASSERT_TRUE(p.status.ok()) << p.status.message();
  expect_small_config(p.spec.config);
  EXPECT_EQ(p.spec.format, ModelFormat::kLlama2cV2);
  EXPECT_EQ(p.spec.group_size, 4);
  EXPECT_FALSE(p.spec.has(TensorRole::kWcls));
  EXPECT_EQ(p.spec.type(TensorRole::kRmsAtt), TensorType::kF32);
  // token_embedding at 416: 80 int8 then 20 scales; wq at 576, 64 int8 + 16 scales per layer.
  const TensorInfo tok = p.spec.tensor(TensorRole::kTokenEmbedding, -1);
  EXPECT_EQ(tok.type, TensorType::kQ80);
  EXPECT_EQ(tok.offset, 416u);
  EXPECT_EQ(tok.scales_offset(), 496u);
  EXPECT_EQ(tok.scale_bytes, 80u);
  const TensorInfo wq1 = p.spec.tensor(TensorRole::kWq, 1);
  EXPECT_EQ(wq1.offset, 704u);
  EXPECT_EQ(wq1.scales_offset(), 768u);
  EXPECT_EQ(p.spec.tensor(TensorRole::kWk, 0).offset, 832u);
  EXPECT_EQ(p.spec.tensor(TensorRole::kW1, 0).offset, 1344u);
  EXPECT_EQ(p.spec.tensor(TensorRole::kW3, 1).offset, 2112u + 192);
  EXPECT_EQ(p.spec.file_bytes, kV2Shared);
}

TEST(ValidHeader, V2Unshared) {
  const Parsed p = parse(v2(kSmall, 4, 0, kV2Unshared - 256));
  ASSERT_TRUE(p.status.ok()) << p.status.message();
  const TensorInfo wcls = p.spec.tensor(TensorRole::kWcls, -1);
  EXPECT_EQ(wcls.offset, 2496u);
  EXPECT_EQ(wcls.scales_offset(), 2576u);
  EXPECT_EQ(wcls.bytes(), 160u);
}

// ---- The real shared models -------------------------------------------------------------------

Parsed parse_file(const std::string& path, Status* open_status) {
  FileStorage f;
  Parsed p;
  *open_status = f.open(path.c_str(), "model");
  if (open_status->ok()) p.status = read_model_spec(f, &p.spec);
  return p;
}

void expect_stories260k(const ModelConfig& c) { expect_config(c, {64, 172, 5, 8, 4, 512, 512}); }

TEST(RealModel, Stories260KParses) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin");
  const std::string path = test::model_path("stories260K.bin");
  Status open;
  const Parsed p = parse_file(path, &open);
  ASSERT_TRUE(open.ok()) << open.message();
  ASSERT_TRUE(p.status.ok()) << p.status.message();
  EXPECT_EQ(p.spec.format, ModelFormat::kLlama2cV0);
  expect_stories260k(p.spec.config);
}

TEST(RealModel, Stories260KQ80Parses) {
  POCKETLM_REQUIRE_FILES("models/stories260K_q80.bin");
  const std::string path = test::model_path("stories260K_q80.bin");
  Status open;
  const Parsed p = parse_file(path, &open);
  ASSERT_TRUE(open.ok()) << open.message();
  ASSERT_TRUE(p.status.ok()) << p.status.message();
  EXPECT_EQ(p.spec.format, ModelFormat::kLlama2cV2);
  EXPECT_EQ(p.spec.group_size, 4);
  expect_stories260k(p.spec.config);
}

TEST(RealModel, TruncatedCopyFailsInTheCli) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
  const std::string source = test::model_path("stories260K.bin");
  Bytes bytes = test::read_file(source);
  ASSERT_GT(bytes.size(), 1000u);
  const std::size_t full = bytes.size();
  bytes.resize(full / 2);
  const std::string path = test::temp_dir() + "/truncated.bin";
  test::write_file(path, bytes);
  const test::CommandResult r =
      test::run_pocketlm({"run", path, "-z", test::model_path("tok512.bin"), "-n", "5", "-s", "1"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_EQ(r.err.rfind("pocketlm: error: " + path + ": ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find("truncated"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("implies " + std::to_string(full) + " bytes"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("has " + std::to_string(full / 2)), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
}

}  // namespace
}  // namespace pocketlm
