// The GGUF reader and writer in memory: a tiny llama model written by GgufWriter and read back,
// its tokenizer loaded from the file, and the bad-input table's GGUF rows (each a one-line
// error naming the file, the key or tensor and the value): truncation anywhere, bad magic and
// version, huge counts, string and array lengths, unaligned, overlapping and unevenly spaced
// offsets, unsupported and unknown tensor types, unknown tensors, a foreign architecture, missing
// and duplicate keys. Then the tokenizer round trip tokenizer.bin -> GGUF -> tables.
#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "pocketlm/format/gguf.h"
#include "pocketlm/format/gguf_writer.h"
#include "pocketlm/format/model_reader.h"
#include "pocketlm/io/memory_storage.h"
#include "pocketlm/quant/tensor_type.h"
#include "pocketlm/runtime/session.h"
#include "ports/posix/file_storage.h"
#include "golden_models.h"
#include "test_support.h"

namespace pocketlm {
namespace {

using namespace gguf;

using test::VectorSink;

struct TinyOptions {
  std::string arch = "llama";
  bool arch_after_keys = false;  // general.architecture written after the llama.* keys
  bool block_count = true;
  bool duplicate_key = false;
  std::uint32_t matrix_type = kGgmlF32;
  std::string extra_tensor;  // an unknown tensor [1, 32] f32
  bool tokenizer = true;
  float score4 = -2.0f;  // tokenizer.ggml.scores[4]
  std::string output_norm = "output_norm.weight";  // its tensor name
  std::string odd_norm;                             // a norm tensor written with norm_type
  std::uint32_t norm_type = kGgmlF16;
};

// A llama model of dim 32, hidden 64, 2 layers, 2 heads (1 kv head), vocab 8, seq_len 8, and the
// positions of the fields the bad-input cases change.
struct Tiny {
  std::vector<unsigned char> bytes;
  std::map<std::string, std::size_t> type_at;  // tensor name -> offset of its u32 type field
  std::size_t first_key_at = 24;
  std::size_t tokens_count_at = 0;
};

const char* const kPieces[8] = {"<unk>", "<s>", "</s>", "\xE2\x96\x81" "a", "\xE2\x96\x81" "b", "a", "b", "\xE2\x96\x81"};

Tiny make_tiny(const TinyOptions& o = TinyOptions()) {
  VectorSink sink;
  GgufWriter w(sink);
  Tiny t;
  struct T {
    std::string name;
    std::uint64_t rows, cols;
  };
  std::vector<T> tensors = {{"token_embd.weight", 8, 32}};
  for (int l = 0; l < 2; ++l) {
    const std::string b = "blk." + std::to_string(l) + ".";
    tensors.push_back({b + "attn_norm.weight", 1, 32});
    tensors.push_back({b + "attn_q.weight", 32, 32});
    tensors.push_back({b + "attn_k.weight", 16, 32});
    tensors.push_back({b + "attn_v.weight", 16, 32});
    tensors.push_back({b + "attn_output.weight", 32, 32});
    tensors.push_back({b + "ffn_norm.weight", 1, 32});
    tensors.push_back({b + "ffn_gate.weight", 64, 32});
    tensors.push_back({b + "ffn_down.weight", 32, 64});
    tensors.push_back({b + "ffn_up.weight", 64, 32});
  }
  tensors.push_back({o.output_norm, 1, 32});
  if (!o.extra_tensor.empty()) tensors.push_back({o.extra_tensor, 1, 32});
  const std::uint64_t kv = 9 + (o.block_count ? 1 : 0) + (o.duplicate_key ? 1 : 0) + (o.tokenizer ? 5 : 0);
  EXPECT_TRUE(w.begin(tensors.size(), kv).ok());
  if (!o.arch_after_keys) EXPECT_TRUE(w.kv_string(key::kArchitecture, o.arch.c_str()).ok());
  EXPECT_TRUE(w.kv_u32(key::kContextLength, 8).ok());
  if (o.arch_after_keys) EXPECT_TRUE(w.kv_string(key::kArchitecture, o.arch.c_str()).ok());
  EXPECT_TRUE(w.kv_u32(key::kEmbeddingLength, 32).ok());
  if (o.block_count) EXPECT_TRUE(w.kv_u32(key::kBlockCount, 2).ok());
  if (o.duplicate_key) EXPECT_TRUE(w.kv_u32(key::kEmbeddingLength, 32).ok());
  EXPECT_TRUE(w.kv_u32(key::kFeedForwardLength, 64).ok());
  EXPECT_TRUE(w.kv_u32(key::kHeadCount, 2).ok());
  EXPECT_TRUE(w.kv_u32(key::kHeadCountKv, 1).ok());
  EXPECT_TRUE(w.kv_f32(key::kRmsEps, 1e-5f).ok());
  EXPECT_TRUE(w.kv_f32(key::kRopeFreqBase, 10000.0f).ok());
  if (o.tokenizer) {
    EXPECT_TRUE(w.kv_string(key::kTokenizerModel, "llama").ok());
    EXPECT_TRUE(w.kv_array(key::kTokens, kString, 8).ok());
    t.tokens_count_at = static_cast<std::size_t>(w.bytes_written()) - 8;
    for (const char* p : kPieces) EXPECT_TRUE(w.array_string(p, std::strlen(p)).ok());
    const float scores[8] = {0, 0, 0, -1, o.score4, -3, -4, -5};
    EXPECT_TRUE(w.kv_array(key::kScores, kFloat32, 8).ok());
    EXPECT_TRUE(w.array_f32(scores, 8).ok());
    EXPECT_TRUE(w.kv_u32(key::kBosId, 1).ok());
    EXPECT_TRUE(w.kv_u32(key::kEosId, 2).ok());
  }
  EXPECT_TRUE(w.kv_u32(key::kVocabSize, 8).ok());
  std::vector<std::uint64_t> sizes;
  for (const T& x : tensors) {
    std::uint64_t bytes = 0;
    const std::uint32_t type = x.rows > 1 ? o.matrix_type : x.name == o.odd_norm ? o.norm_type : kGgmlF32;
    EXPECT_TRUE(w.tensor_info(x.name.c_str(), x.rows, x.cols, type, &bytes).ok()) << x.name;
    t.type_at[x.name] = static_cast<std::size_t>(w.bytes_written()) - 12;
    sizes.push_back(bytes);
  }
  std::mt19937 rng(1);
  std::uniform_int_distribution<int> small(0, 63);
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    EXPECT_TRUE(w.begin_tensor(sizes[i]).ok());
    std::vector<unsigned char> data(static_cast<std::size_t>(sizes[i]));
    if (tensors[i].rows > 1 && o.matrix_type == kGgmlF32) {
      for (std::size_t k = 0; k < data.size() / 4; ++k) {
        const float v = (static_cast<float>(small(rng)) - 32.0f) / 256.0f;
        std::memcpy(data.data() + 4 * k, &v, 4);
      }
    } else if (tensors[i].rows == 1) {
      for (std::size_t k = 0; k < data.size() / 4; ++k) {
        const float v = 1.0f;
        std::memcpy(data.data() + 4 * k, &v, 4);
      }
    }
    EXPECT_TRUE(w.tensor_data(data.data(), data.size()).ok());
  }
  EXPECT_TRUE(w.finish().ok());
  t.bytes = sink.bytes();
  return t;
}

Status read(const std::vector<unsigned char>& bytes, ModelSpec* spec) {
  MemoryStorage s(bytes.data(), bytes.size(), "m.gguf");
  return read_model_spec(s, spec);
}

std::string error_of(const std::vector<unsigned char>& bytes) {
  ModelSpec spec;
  const Status st = read(bytes, &spec);
  return st.ok() ? std::string() : std::string(st.message());
}

void put32(std::vector<unsigned char>& b, std::size_t at, std::uint32_t v) { std::memcpy(b.data() + at, &v, 4); }
void put64(std::vector<unsigned char>& b, std::size_t at, std::uint64_t v) { std::memcpy(b.data() + at, &v, 8); }
std::uint64_t get64(const std::vector<unsigned char>& b, std::size_t at) {
  std::uint64_t v;
  std::memcpy(&v, b.data() + at, 8);
  return v;
}

#define EXPECT_ERROR(bytes, ...)                                                                     \
  do {                                                                                               \
    const std::string m = error_of(bytes);                                                           \
    ASSERT_FALSE(m.empty()) << "accepted";                                                           \
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;                                                 \
    for (const char* needle : {__VA_ARGS__}) EXPECT_NE(m.find(needle), std::string::npos) << needle << " in " << m; \
  } while (0)

// The type table's ggml ids and file types are ggml's and llama.cpp's (gguf.h names them): each
// GGUF type maps to its row and back; q80, llama2.c's own, has none; other ids map to nothing.
TEST(Gguf, TypeTableHoldsGgmlIdsAndFileTypes) {
  const struct {
    std::uint32_t ggml, file_type;
    pocketlm::TensorType type;
  } kRows[] = {{gguf::kGgmlF32, gguf::kFileTypeF32, pocketlm::TensorType::kF32},
               {gguf::kGgmlF16, gguf::kFileTypeF16, pocketlm::TensorType::kF16},
               {gguf::kGgmlQ8_0, gguf::kFileTypeQ8_0, pocketlm::TensorType::kQ8_0},
               {gguf::kGgmlQ4_0, gguf::kFileTypeQ4_0, pocketlm::TensorType::kQ4_0},
               {gguf::kGgmlIQ4_XS, gguf::kFileTypeIQ4_XS, pocketlm::TensorType::kIQ4_XS}};
  for (const auto& row : kRows) {
    pocketlm::TensorType t = pocketlm::TensorType::kQ80;
    ASSERT_TRUE(pocketlm::type_from_ggml(row.ggml, &t)) << row.ggml;
    EXPECT_EQ(t, row.type);
    EXPECT_EQ(pocketlm::type_traits(t).ggml_type, static_cast<int>(row.ggml));
    EXPECT_EQ(pocketlm::type_traits(t).gguf_file_type, static_cast<int>(row.file_type));
    EXPECT_NE(pocketlm::type_traits(t).quantize_weights, nullptr);
    pocketlm::TensorType by_name = pocketlm::TensorType::kQ80;
    ASSERT_TRUE(pocketlm::type_from_name(pocketlm::type_name(t), &by_name));
    EXPECT_EQ(by_name, t);
  }
  EXPECT_EQ(pocketlm::type_traits(pocketlm::TensorType::kQ80).ggml_type, -1);
  pocketlm::TensorType t;
  for (std::uint32_t id : {3u, 7u, 9u, 12u, 24u, 30u, 0xFFFFFFFFu}) EXPECT_FALSE(pocketlm::type_from_ggml(id, &t)) << id;
  EXPECT_FALSE(pocketlm::type_from_name("q4_1", &t));
}

TEST(Gguf, WrittenModelReadsBack) {
  const Tiny t = make_tiny();
  ModelSpec spec;
  ASSERT_TRUE(read(t.bytes, &spec).ok()) << error_of(t.bytes);
  EXPECT_EQ(spec.format, ModelFormat::kGguf);
  const ModelConfig& c = spec.config;
  EXPECT_EQ(c.dim, 32);
  EXPECT_EQ(c.hidden_dim, 64);
  EXPECT_EQ(c.n_layers, 2);
  EXPECT_EQ(c.n_heads, 2);
  EXPECT_EQ(c.n_kv_heads, 1);
  EXPECT_EQ(c.vocab_size, 8);
  EXPECT_EQ(c.seq_len, 8);
  EXPECT_EQ(c.bos_id, 1);
  EXPECT_EQ(c.eos_id, 2);
  EXPECT_TRUE(spec.shared_classifier);
  EXPECT_EQ(spec.header_bytes % 32, 0u);
  EXPECT_TRUE(spec.tokenizer.present);
  EXPECT_EQ(spec.tokenizer.count, 8);
  // Pieces as llama2.c holds them: "<unk>" "\n<s>\n" "\n</s>\n" " a" " b" "a" "b" " ".
  EXPECT_EQ(spec.tokenizer.piece_bytes, 5u + 5 + 6 + 2 + 2 + 1 + 1 + 1);
  const TensorInfo wk1 = spec.tensor(TensorRole::kWk, 1);
  EXPECT_EQ(wk1.rows, 16u);
  EXPECT_EQ(wk1.cols, 32u);
  EXPECT_EQ(wk1.offset % 32, 0u);
  EXPECT_LE(spec.tensor(TensorRole::kRmsFinal, -1).offset + 128, t.bytes.size());
}

TEST(Gguf, SessionRunsItWithItsOwnTokenizer) {
  for (std::uint32_t type : {kGgmlF32, kGgmlF16, kGgmlQ8_0, kGgmlQ4_0}) {
    TinyOptions o;
    o.matrix_type = type;
    const Tiny t = make_tiny(o);
    MemoryStorage model(t.bytes.data(), t.bytes.size(), "m.gguf");
    Session session;
    ASSERT_TRUE(session.open(model, nullptr, SessionOptions{}).ok()) << ggml_type_name(type);
    const Piece p = session.tokenizer().piece(3);
    EXPECT_EQ(std::string(reinterpret_cast<const char*>(p.data), p.size), " a");
    EXPECT_EQ(std::string(reinterpret_cast<const char*>(session.tokenizer().piece(1).data), 5), "\n<s>\n");
    EXPECT_EQ(session.tokenizer().score(4), -2.0f);
    std::int32_t tokens[64];
    int n = 0;
    ASSERT_TRUE(session.encode("a b", 3, tokens, 64, &n).ok());
    EXPECT_EQ(std::vector<std::int32_t>(tokens, tokens + n), (std::vector<std::int32_t>{1, 3, 4}));
    SamplerParams params;
    params.temperature = 0.0f;
    std::vector<int> next;
    ASSERT_TRUE(session.generate(tokens, n, 8, params, test::collect_tokens, &next, nullptr).ok());
    EXPECT_FALSE(next.empty());
  }
}

TEST(Gguf, WithoutATokenizerTheSessionAsksForZ) {
  TinyOptions o;
  o.tokenizer = false;
  const Tiny t = make_tiny(o);
  MemoryStorage model(t.bytes.data(), t.bytes.size(), "m.gguf");
  Session session;
  const Status st = session.open(model, nullptr, SessionOptions{});
  ASSERT_FALSE(st.ok());
  EXPECT_NE(std::string(st.message()).find("m.gguf: the model file carries no tokenizer; give one with -z"),
            std::string::npos)
      << st.message();
}

TEST(GgufBadInput, NaNScoreIsRefusedWhenTheTokenizerLoads) {
  TinyOptions o;
  o.score4 = std::numeric_limits<float>::quiet_NaN();
  const Tiny t = make_tiny(o);
  MemoryStorage model(t.bytes.data(), t.bytes.size(), "m.gguf");
  Session session;
  const Status st = session.open(model, nullptr, SessionOptions{});
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(std::string(st.message()), "m.gguf: tokenizer.ggml.scores of token 4 is NaN (bits " +
                                           test::float_bits_hex(o.score4) + "): merge scores must be numbers");
}

TEST(GgufBadInput, TruncatedAnywhere) {
  const Tiny t = make_tiny();
  for (std::size_t cut : {std::size_t{0}, std::size_t{3}, std::size_t{10}, std::size_t{23}, std::size_t{30},
                          t.tokens_count_at + 20, t.type_at.begin()->second, t.bytes.size() / 2, t.bytes.size() - 1}) {
    const std::vector<unsigned char> b(t.bytes.begin(), t.bytes.begin() + static_cast<std::ptrdiff_t>(cut));
    const std::string m = error_of(b);
    EXPECT_FALSE(m.empty()) << "cut at " << cut;
    EXPECT_NE(m.find("m.gguf"), std::string::npos) << m;
  }
  EXPECT_ERROR(std::vector<unsigned char>(t.bytes.begin(), t.bytes.end() - 1), "m.gguf: GGUF tensor output_norm.weight",
               "runs past the end of the file");
}

TEST(GgufBadInput, MagicAndVersion) {
  Tiny t = make_tiny();
  auto b = t.bytes;
  b[3] = 'X';
  EXPECT_ERROR(b, "m.gguf", "unknown magic");
  b = t.bytes;
  put32(b, 4, 2);
  EXPECT_ERROR(b, "m.gguf: GGUF header field version = 2 is not supported");
}

TEST(GgufBadInput, HugeCountsAndLengths) {
  const Tiny t = make_tiny();
  auto b = t.bytes;
  put64(b, 8, std::uint64_t{1} << 62);
  EXPECT_ERROR(b, "m.gguf: GGUF header field tensor_count = 4611686018427387904 cannot fit");
  b = t.bytes;
  put64(b, 16, ~std::uint64_t{0});
  EXPECT_ERROR(b, "m.gguf: GGUF header field metadata_kv_count = 18446744073709551615 cannot fit");
  b = t.bytes;
  put64(b, t.first_key_at, std::uint64_t{1} << 40);
  EXPECT_ERROR(b, "m.gguf: GGUF metadata key has a string length of 1099511627776 bytes", "past the end");
  b = t.bytes;
  put64(b, t.tokens_count_at, std::uint64_t{1} << 61);
  EXPECT_ERROR(b, "m.gguf: GGUF key tokenizer.ggml.tokens is an array of 2305843009213693952 string values");
  b = t.bytes;
  put64(b, t.tokens_count_at + 8, 1000000);  // the first token's length
  EXPECT_ERROR(b, "m.gguf: GGUF tokenizer.ggml.tokens has a string length of 1000000 bytes");
}

TEST(GgufBadInput, Offsets) {
  const Tiny t = make_tiny();
  auto b = t.bytes;
  const std::size_t q1 = t.type_at.at("blk.1.attn_q.weight") + 4;
  put64(b, q1, get64(b, q1) + 4);
  EXPECT_ERROR(b, "m.gguf: GGUF tensor blk.1.attn_q.weight has data offset", "not a multiple of the alignment 32");
  b = t.bytes;
  put64(b, q1, get64(b, t.type_at.at("blk.0.attn_q.weight") + 4));
  EXPECT_ERROR(b, "m.gguf: GGUF tensor blk.1.attn_q.weight", "is not after blk.0.attn_q.weight");
  b = t.bytes;  // output_norm on top of token_embd
  put64(b, t.type_at.at("output_norm.weight") + 4, get64(b, t.type_at.at("token_embd.weight") + 4));
  EXPECT_ERROR(b, "m.gguf: GGUF tensor", "overlaps tensor");
  b = t.bytes;  // past the end of the file
  put64(b, t.type_at.at("output_norm.weight") + 4, std::uint64_t{1} << 40);
  EXPECT_ERROR(b, "m.gguf: GGUF tensor output_norm.weight", "runs past the end of the file");
  b = t.bytes;  // a layer that is not where its spacing says
  const std::size_t k1 = t.type_at.at("blk.1.attn_k.weight") + 4;
  put64(b, k1, get64(b, k1) + 32);
  EXPECT_ERROR(b, "m.gguf: GGUF tensor");
}

TEST(GgufBadInput, TypesAndNames) {
  const Tiny t = make_tiny();
  auto b = t.bytes;
  put32(b, t.type_at.at("blk.0.attn_k.weight"), 12);
  EXPECT_ERROR(b, "m.gguf: GGUF tensor blk.0.attn_k.weight has type Q4_K (12), which pocketlm does not read");
  b = t.bytes;
  put32(b, t.type_at.at("blk.0.attn_k.weight"), 99);
  EXPECT_ERROR(b, "m.gguf: GGUF tensor blk.0.attn_k.weight has type unknown (99)");
  TinyOptions o;
  o.extra_tensor = "rope_freqs.weight";
  EXPECT_ERROR(make_tiny(o).bytes, "m.gguf: GGUF tensor rope_freqs.weight is not a tensor of a llama model");
  o = TinyOptions();
  o.arch = "gemma3n";
  EXPECT_ERROR(make_tiny(o).bytes, "m.gguf: GGUF key general.architecture = 'gemma3n' is not supported (pocketlm runs: llama");
  // The keys of an architecture are read under its prefix, so the file says which one first.
  TinyOptions late;
  late.arch_after_keys = true;
  EXPECT_ERROR(make_tiny(late).bytes, "m.gguf: GGUF key llama.context_length comes before general.architecture");
  o = TinyOptions();
  o.block_count = false;
  EXPECT_ERROR(make_tiny(o).bytes, "m.gguf: GGUF key llama.block_count is missing");
  o = TinyOptions();
  o.duplicate_key = true;
  EXPECT_ERROR(make_tiny(o).bytes, "m.gguf: GGUF key llama.embedding_length appears twice");
}

// Norm weights must be F32: the error names the file, the GGUF tensor, the type found and F32.
TEST(GgufBadInput, NormWeightsThatAreNotF32) {
  for (const char* norm : {"output_norm.weight", "blk.0.attn_norm.weight", "blk.1.ffn_norm.weight"}) {
    for (std::uint32_t type : {kGgmlF16, kGgmlQ8_0, kGgmlQ4_0}) {
      TinyOptions o;
      o.odd_norm = norm;
      o.norm_type = type;
      const std::string expected =
          std::string("m.gguf: GGUF tensor ") + norm + " has type " + ggml_type_name(type) + "; norm weights must be F32";
      EXPECT_ERROR(make_tiny(o).bytes, expected.c_str());
    }
  }
  // Through the binary (the session used to say only "tensor rms_final: norm weights must be f32").
  TinyOptions o;
  o.odd_norm = "output_norm.weight";
  const std::string path = test::temp_dir() + "/f16-norm.gguf";
  test::write_file(path, make_tiny(o).bytes);
  const test::CommandResult r = test::run_pocketlm({"run", path});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "pocketlm: error: " + path + ": GGUF tensor output_norm.weight has type F16; norm weights must be F32\n");
}

// "output_norm.weight\0Z" was cut at the NUL and read as output_norm.weight.
TEST(GgufBadInput, NulInsideATensorNameOrAStringValue) {
  TinyOptions o;
  o.output_norm = "output_norm.weightZZ";
  const Tiny t = make_tiny(o);
  auto b = t.bytes;
  const std::size_t name_at = t.type_at.at(o.output_norm) - 4 - 8 - o.output_norm.size();  // n_dims, 1 dim (a norm)
  ASSERT_EQ(b[name_at + 18], 'Z');
  b[name_at + 18] = 0;
  EXPECT_ERROR(b, "m.gguf: GGUF tensor 19 name 'output_norm.weight' has a NUL byte at byte 18 of its 20");
  // The same for a string value: "llama\0" was read as llama.
  o = TinyOptions();
  o.arch = "llamaZ";
  b = make_tiny(o).bytes;
  const std::size_t value_at = t.first_key_at + 8 + std::strlen(key::kArchitecture) + 4 + 8;  // key, type, length
  ASSERT_EQ(b[value_at + 5], 'Z');
  b[value_at + 5] = 0;
  EXPECT_ERROR(b, "m.gguf: GGUF general.architecture 'llama' has a NUL byte at byte 5 of its 6");
}

// Through the binary: one line on stderr, nothing on stdout, exit code 1.
TEST(GgufBadInput, CliReportsOneLine) {
  const Tiny t = make_tiny();
  auto b = t.bytes;
  put32(b, t.type_at.at("blk.0.attn_k.weight"), 12);
  const std::string path = test::temp_dir() + "/m.gguf";
  test::write_file(path, b);
  const test::CommandResult r = test::run_pocketlm({"run", path});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_EQ(r.err, "pocketlm: error: " + path + ": GGUF tensor blk.0.attn_k.weight has type Q4_K (12), which pocketlm "
                   "does not read (it reads F32, F16, Q8_0, Q4_0 and IQ4_XS)\n");
}

// tokenizer.bin -> GGUF -> the tables a session holds: the same pieces, scores and ids.
TEST(GgufTokenizer, RoundTripKeepsEveryPieceAndScore) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin", "models/tokenizer.bin");
  for (const char* tok : {"tok512.bin", "tokenizer.bin"}) {
    const std::string vocab_model = std::string(tok) == "tok512.bin" ? "stories260K.bin" : "";
    std::string model = vocab_model.empty() ? std::string() : test::model_path(vocab_model);
    if (model.empty()) {
      // A 32000-token model: the smallest stories15M-shaped file is large; a tiny v0 header with
      // vocab 32000 and dim 4 is enough to carry the vocabulary.
      std::vector<unsigned char> bin;
      for (std::int32_t v : {4, 4, 1, 1, 1, 32000, 2}) test::put_i32(bin, v);
      const std::size_t floats = 32000 * 4 + 4 + 16 * 4 + 4 + 16 * 3 + 4 + 2 * 2 * 2;  // v0 order, freq_cis too
      for (std::size_t i = 0; i < floats; ++i) test::put_f32(bin, 0.01f);
      model = test::temp_dir() + "/v32k.bin";
      test::write_file(model, bin);
    }
    const std::string gguf = test::temp_dir() + "/m.gguf";
    const test::CommandResult c =
        test::run_pocketlm({"convert", model, "--to", "gguf", "-z", test::model_path(tok), "-o", gguf});
    ASSERT_EQ(c.exit_code, 0) << c.err;
    FileStorage bin_model, bin_tok, gguf_model;
    ASSERT_TRUE(bin_model.open(model.c_str(), "model").ok());
    ASSERT_TRUE(bin_tok.open(test::model_path(tok).c_str(), "tokenizer").ok());
    ASSERT_TRUE(gguf_model.open(gguf.c_str(), "model").ok());
    Session a, b;
    ASSERT_TRUE(a.open(bin_model, bin_tok, SessionOptions{}).ok());
    const Status st = b.open(gguf_model, nullptr, SessionOptions{});
    ASSERT_TRUE(st.ok()) << st.message();
    const Tokenizer& ta = a.tokenizer();
    const Tokenizer& tb = b.tokenizer();
    ASSERT_EQ(ta.vocab_size(), tb.vocab_size());
    int differ = 0;
    for (int i = 0; i < ta.vocab_size(); ++i) {
      const Piece pa = ta.piece(i), pb = tb.piece(i);
      if (pa.size != pb.size || std::memcmp(pa.data, pb.data, pa.size) != 0 || ta.score(i) != tb.score(i)) {
        if (++differ < 5) ADD_FAILURE() << tok << ": token " << i << " differs";
      }
    }
    EXPECT_EQ(differ, 0) << tok;
    EXPECT_EQ(ta.max_token_length(), tb.max_token_length()) << tok;
  }
}

}  // namespace
}  // namespace pocketlm
