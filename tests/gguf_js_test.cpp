// An independent reading of the GGUF files pocketlm writes: Hugging Face's JavaScript GGUF
// parser (@huggingface/gguf from npm, run with node; tests/gguf_js/) must see the metadata and
// tensor table that pocketlm's own reader sees and that the source model and tokenizer say.
// The parser is installed into the build tree on first use (npm install); CI installs nodejs and
// npm (.ci/run). Only a machine without node skips this test, saying so.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>

#include "pocketlm/format/gguf.h"
#include "golden_models.h"
#include "pocketlm/format/model_reader.h"
#include "ports/posix/file_storage.h"
#include "test_support.h"

namespace pocketlm {
namespace {

using nlohmann::json;

std::string capture(const std::string& cmd, int* status) {
  std::string out;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) return out;
  char buf[65536];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  *status = ::pclose(p);
  return out;
}

std::uint32_t ggml_code(TensorType t) {
  switch (t) {
    case TensorType::kF16: return gguf::kGgmlF16;
    case TensorType::kQ8_0: return gguf::kGgmlQ8_0;
    case TensorType::kQ4_0: return gguf::kGgmlQ4_0;
    case TensorType::kIQ4_XS: return gguf::kGgmlIQ4_XS;
    default: return gguf::kGgmlF32;
  }
}

// The last piece of a llama2.c tokenizer.bin, spelled as GGUF spells it (spaces as U+2581).
std::string last_piece_spelled(const std::string& tokenizer) {
  const std::vector<unsigned char> b = test::read_file(test::model_path(tokenizer));
  std::size_t at = 4;
  std::string piece;
  while (at + 8 <= b.size()) {
    std::int32_t len = 0;
    std::memcpy(&len, b.data() + at + 4, 4);
    piece.assign(reinterpret_cast<const char*>(b.data() + at + 8), static_cast<std::size_t>(len));
    at += 8 + static_cast<std::size_t>(len);
  }
  std::string spelled;
  for (char ch : piece) spelled += ch == ' ' ? std::string("\xE2\x96\x81") : std::string(1, ch);
  return spelled;
}

std::string gguf_name(const TensorInfo& t) {
  const char* g = t.schema->gguf_name;
  return t.layer >= 0 ? "blk." + std::to_string(t.layer) + (g + 6) : std::string(g);
}

// The directory with the parser installed; "" when node is missing (*skip) or the install
// failed (a test failure).
std::string parser_dir(bool* skip) {
  int status = 0;
  const std::string node = capture("command -v node", &status);
  *skip = status != 0 || node.empty();
  if (*skip) return "";
  const std::string dir = POCKETLM_NPM_DIR;
  const std::string src = POCKETLM_GGUF_JS_DIR;
  if (std::system(("mkdir -p '" + dir + "' && cp '" + src + "/package.json' '" + src + "/dump.mjs' '" + dir + "/'")
                      .c_str()) != 0) {
    ADD_FAILURE() << "cannot copy " << src << " to " << dir;
    return "";
  }
  if (!test::file_exists(dir + "/node_modules/@huggingface/gguf/package.json") &&
      std::system(("cd '" + dir + "' && npm install --no-audit --no-fund --silent >npm-install.log 2>&1").c_str()) != 0) {
    ADD_FAILURE() << "npm install of @huggingface/gguf failed: see " << dir << "/npm-install.log";
    return "";
  }
  return dir;
}

constexpr const char* kNoNode = "node is not installed: the @huggingface/gguf check is skipped (CI installs nodejs and npm)";

// The parser's view of the GGUF file at `path` (its dump as JSON) and pocketlm's (the spec).
void read_both(const std::string& dir, const std::string& path, json* js, ModelSpec* spec) {
  int status = 0;
  const std::string text = capture("cd '" + dir + "' && node dump.mjs '" + path + "'", &status);
  ASSERT_EQ(status, 0) << text;
  *js = json::parse(text);
  FileStorage f;
  ASSERT_TRUE(f.open(path.c_str(), "model").ok());
  ASSERT_TRUE(read_model_spec(f, spec).ok());
}

// IQ4_XS (type 23): the ESP32-shaped PLE model with its table in IQ4_XS, each tensor where
// pocketlm's reader puts it. Part of the test above, so that one process installs the parser.
void expect_iq4_xs_table_read(const std::string& dir) {
  SCOPED_TRACE("esp32-ple_iq4xs.gguf");
  const std::string path = test::golden_model_path("esp32-ple_iq4xs.gguf");
  ASSERT_FALSE(path.empty());
  json js;
  ModelSpec spec;
  read_both(dir, path, &js, &spec);
  if (::testing::Test::HasFatalFailure()) return;
  EXPECT_EQ(js["metadata"]["general.architecture"], "pocketlm-ple");
  int iq4 = 0;
  for (int i = 0; i < spec.tensor_count(); ++i) {
    const TensorInfo t = spec.tensor(i);
    const std::string name = gguf_name(t);
    for (const json& e : js["tensorInfos"])
      if (e["name"] == name) {
        EXPECT_EQ(e["dtype"], ggml_code(t.type)) << name;
        EXPECT_EQ(e["offset"].get<std::uint64_t>(), t.offset - spec.header_bytes) << name;
        iq4 += e["dtype"] == gguf::kGgmlIQ4_XS;
      }
  }
  EXPECT_EQ(iq4, 1);  // per_layer_token_embd.weight
}

TEST(GgufJs, HuggingFaceParserReadsWhatPocketlmWrites) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/stories260K_q80.bin", "models/tok512.bin");
  bool skip = false;
  const std::string dir = parser_dir(&skip);
  if (skip) GTEST_SKIP() << kNoNode;
  ASSERT_FALSE(dir.empty());

  const std::string work = test::temp_dir();
  struct Case {
    std::string model, tokenizer, type;
  };
  const Case cases[] = {{"stories260K.bin", "tok512.bin", "f32"}, {"stories260K.bin", "tok512.bin", "f16"},
                        {"stories260K.bin", "tok512.bin", "q8_0"}, {"stories260K_q80.bin", "tok512.bin", "q4_0"},
                        {"stories260K.bin", "", "q4_0"}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.model + " " + c.type + (c.tokenizer.empty() ? " (no tokenizer)" : ""));
    const std::string out = work + "/" + c.type + (c.tokenizer.empty() ? "-notok" : "") + ".gguf";
    std::vector<std::string> args = {"convert", test::model_path(c.model), "--to", "gguf", "--type", c.type, "-o", out};
    if (!c.tokenizer.empty()) {
      args.push_back("-z");
      args.push_back(test::model_path(c.tokenizer));
    }
    const test::CommandResult r = test::run_pocketlm(args);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    json js;
    ModelSpec spec;
    read_both(dir, out, &js, &spec);
    if (HasFatalFailure()) return;
    const ModelConfig& cfg = spec.config;
    const json& m = js["metadata"];
    EXPECT_EQ(m["version"], 3);
    EXPECT_EQ(m["general.architecture"], "llama");
    EXPECT_EQ(m["llama.embedding_length"], cfg.dim);
    EXPECT_EQ(m["llama.feed_forward_length"], cfg.hidden_dim);
    EXPECT_EQ(m["llama.block_count"], cfg.n_layers);
    EXPECT_EQ(m["llama.attention.head_count"], cfg.n_heads);
    EXPECT_EQ(m["llama.attention.head_count_kv"], cfg.n_kv_heads);
    EXPECT_EQ(m["llama.context_length"], cfg.seq_len);
    EXPECT_FLOAT_EQ(m["llama.attention.layer_norm_rms_epsilon"].get<float>(), 1e-5f);
    EXPECT_FLOAT_EQ(m["llama.rope.freq_base"].get<float>(), 10000.0f);
    // The source model's shape, as llama2.c's header says it.
    EXPECT_EQ(cfg.dim, 64);
    EXPECT_EQ(cfg.hidden_dim, 172);
    EXPECT_EQ(cfg.n_layers, 5);
    EXPECT_EQ(cfg.vocab_size, 512);
    if (!c.tokenizer.empty()) {
      EXPECT_EQ(m["tokenizer.ggml.model"], "llama");
      EXPECT_EQ(m["tokenizer.ggml.tokens"]["length"], 512);
      EXPECT_EQ(m["tokenizer.ggml.tokens"]["first"], "<unk>");
      EXPECT_EQ(m["tokenizer.ggml.tokens"]["last"].get<std::string>(), last_piece_spelled(c.tokenizer));
      EXPECT_EQ(m["tokenizer.ggml.scores"]["length"], 512);
      EXPECT_EQ(m["tokenizer.ggml.token_type"]["first"], gguf::kTokenUnknown);
      EXPECT_EQ(m["tokenizer.ggml.bos_token_id"], 1);
      EXPECT_EQ(m["tokenizer.ggml.eos_token_id"], 2);
    } else {
      EXPECT_FALSE(m.contains("tokenizer.ggml.tokens"));
    }

    const json& tensors = js["tensorInfos"];
    ASSERT_EQ(tensors.size(), static_cast<std::size_t>(spec.tensor_count()));
    for (int i = 0; i < spec.tensor_count(); ++i) {
      const TensorInfo t = spec.tensor(i);
      const std::string name = gguf_name(t);
      const json* found = nullptr;
      for (const json& e : tensors)
        if (e["name"] == name) found = &e;
      ASSERT_NE(found, nullptr) << name;
      const json& e = *found;
      const std::vector<std::uint64_t> shape = t.rows == 1 ? std::vector<std::uint64_t>{t.cols}
                                                           : std::vector<std::uint64_t>{t.cols, t.rows};
      EXPECT_EQ(e["shape"].get<std::vector<std::uint64_t>>(), shape) << name;
      EXPECT_EQ(e["dtype"], ggml_code(t.type)) << name;
      EXPECT_EQ(e["offset"].get<std::uint64_t>(), t.offset - spec.header_bytes) << name;
      // Norms f32; matrices the asked type, or F16 where a row is not whole blocks of 32.
      const bool q = c.type == "q8_0" || c.type == "q4_0";
      const std::string want = t.rows == 1 ? "f32" : q && t.cols % 32 != 0 ? "f16" : c.type;
      EXPECT_EQ(type_name(t.type), want) << name;
    }
  }
  expect_iq4_xs_table_read(dir);
}

}  // namespace
}  // namespace pocketlm
