// Wrong files: what people give instead of a llama2.c checkpoint gets one error line that
// says what the file is (src/pocketlm/format/file_kind.h), never a header field of bytes that
// were never a header. Real checkpoints that fail for their own reasons (truncated, a bad
// field) keep their own message: the recognisers must not claim them.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "pocketlm/format/model_reader.h"
#include "pocketlm/format/file_kind.h"
#include "pocketlm/format/llama2c_reader.h"
#include "pocketlm/io/memory_storage.h"
#include "test_support.h"

namespace pocketlm {
namespace {

using Bytes = std::vector<unsigned char>;

Bytes text(const std::string& s) { return Bytes(s.begin(), s.end()); }

Bytes concat(Bytes a, const Bytes& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

Bytes shared_file(const char* name, std::size_t max = SIZE_MAX) {
  Bytes b = test::read_file(test::model_path(name));
  if (b.size() > max) b.resize(max);
  return b;
}

// Reverses the byte order of the first `ints` 4-byte words: a header written big-endian.
// A file shorter than that (a shared model that is not there: empty) is returned as it is.
Bytes byte_swapped(Bytes b, int ints) {
  if (b.size() < 4 * static_cast<std::size_t>(ints)) return b;
  for (int i = 0; i < ints; ++i) std::reverse(b.begin() + 4 * i, b.begin() + 4 * i + 4);
  return b;
}

std::string error_of(const Bytes& bytes) {
  MemoryStorage storage(bytes.data(), bytes.size(), "model.bin");
  ModelSpec spec;
  const Status st = read_model_spec(storage, &spec);
  return st.ok() ? "" : st.message();
}

struct KindCase {
  const char* name;
  Bytes bytes;
  std::vector<std::string> needles;
  const char* shared = nullptr;  // the shared model the bytes come from (skipped when missing)
};

void PrintTo(const KindCase& c, std::ostream* os) { *os << c.name; }

std::vector<KindCase> kind_cases() {
  Bytes safetensors;
  const std::string json = "{\"__metadata__\":{\"format\":\"pt\"},\"w\":{\"dtype\":\"F32\",\"shape\":[1],"
                           "\"data_offsets\":[0,4]}}";
  test::put_i32(safetensors, static_cast<std::int32_t>(json.size()));
  test::put_i32(safetensors, 0);
  safetensors = concat(concat(safetensors, text(json)), Bytes(4, 0));
  Bytes gguf = text("GGUF");
  test::put_i32(gguf, 3);
  gguf.resize(64, 0);
  return {
      {"GitLfsPointer",
       text("version https://git-lfs.github.com/spec/v1\n"
            "oid sha256:4f1d7a5b0a7c8a1e5f0c3b2d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e0f\nsize 1056540\n"),
       {"model.bin: this is a Git LFS pointer", "1056540-byte", "git lfs pull"}},
      {"HtmlPage", text("<!DOCTYPE html>\n<html lang=\"en\"><head><title>stories260K.bin</title></head><body>"),
       {"model.bin: this is an HTML page", "resolve/main"}},
      {"ShortTextDownload", text("404: Not Found"), {"model.bin: this is a text file", "'404: Not Found'"}},
      // GGUF has its own reader now: its error names the missing key instead.
      {"Gguf", gguf, {"model.bin: GGUF key general.architecture is missing"}},
      {"PyTorchZip", concat(text("PK\x03\x04"), Bytes(60, 0)), {"model.bin: this is a zip archive", "PyTorch", "export.py"}},
      {"Safetensors", safetensors, {"model.bin: this is a safetensors file", "export.py"}},
      {"Elf", concat(text("\x7f" "ELF\x02\x01\x01"), Bytes(57, 0)), {"model.bin: this is an ELF program"}},
      // A PNG was described by its bytes read as a header ("n_layers = 218103808 is above 512").
      {"Png", concat(text("\x89PNG\r\n\x1a\n\0\0\0\rIHDR"), Bytes(64, 7)), {"model.bin: this is a PNG image, not a model"}},
      {"Jpeg", concat(text("\xFF\xD8\xFF\xE0\0\x10JFIF"), Bytes(64, 1)), {"model.bin: this is a JPEG image"}},
      {"Gzip", concat(text("\x1F\x8B\x08\0"), Bytes(64, 3)), {"model.bin: this is a gzip-compressed file", "gunzip"}},
      {"Xz", concat(text("\xFD" "7zXZ"), Bytes(64, 0)), {"model.bin: this is an xz-compressed file"}},
      {"Pdf", concat(text("%PDF-1.7\n"), Bytes(64, 0)), {"model.bin: this is a PDF document"}},
      {"ByteSwappedV0", byte_swapped(shared_file("stories260K.bin"), 7),
       {"model.bin: this is a llama2.c v0 checkpoint written big-endian", "dim 64", "hidden_dim 172", "little-endian"},
       "stories260K.bin"},
      {"ByteSwappedQ80", byte_swapped(shared_file("stories260K_q80.bin"), 9),
       {"model.bin: this is a llama2.c checkpoint written big-endian", "'ak42'"},
       "stories260K_q80.bin"},
      {"Tok512AsModel", shared_file("tok512.bin"),
       {"model.bin: this is a llama2.c tokenizer", "max_token_length 7", "'<unk>'", "-z"},
       "tok512.bin"},
      {"Llama2TokenizerAsModel", shared_file("tokenizer.bin"),
       {"model.bin: this is a llama2.c tokenizer", "max_token_length 27"},
       "tokenizer.bin"},
  };
}

class FileKind : public ::testing::TestWithParam<KindCase> {};

TEST_P(FileKind, ErrorSaysWhatTheFileIs) {
  const KindCase& c = GetParam();
  if (c.shared) POCKETLM_REQUIRE_FILES(std::string("models/") + c.shared);
  const std::string message = error_of(c.bytes);
  ASSERT_FALSE(message.empty()) << "accepted as a checkpoint";
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  for (const std::string& n : c.needles) EXPECT_NE(message.find(n), std::string::npos) << "missing '" << n << "' in " << message;
}

INSTANTIATE_TEST_SUITE_P(Recognisers, FileKind, ::testing::ValuesIn(kind_cases()),
                         [](const ::testing::TestParamInfo<KindCase>& info) { return std::string(info.param.name); });

TEST(FileKind, RealCheckpointsThatFailKeepTheirOwnError) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/stories260K_q80.bin");
  // Truncated fp32 and q80 files and an unknown version: the reader's message, untouched.
  const std::string truncated = error_of(shared_file("stories260K.bin", 1000));
  EXPECT_NE(truncated.find("truncated"), std::string::npos) << truncated;
  const std::string truncated_q80 = error_of(shared_file("stories260K_q80.bin", 300));
  EXPECT_NE(truncated_q80.find("truncated"), std::string::npos) << truncated_q80;
  Bytes v9 = shared_file("stories260K_q80.bin");
  v9[4] = 9;
  const std::string version = error_of(v9);
  EXPECT_NE(version.find("version = 9"), std::string::npos) << version;
  for (const std::string& m : {truncated, truncated_q80, version}) EXPECT_EQ(m.find("this is"), std::string::npos) << m;
}

TEST(FileKind, ValidHeadersAreNeverDescribed) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/stories260K_q80.bin");
  char out[256];
  for (const char* name : {"stories260K.bin", "stories260K_q80.bin"}) {
    const Bytes head = shared_file(name, kFileKindHeadBytes);
    EXPECT_FALSE(describe_foreign_file(head.data(), head.size(), head.size(), out, sizeof out)) << name << ": " << out;
  }
  // Nor a real tokenizer given as -z.
  for (const char* name : {"tok512.bin", "tokenizer.bin"}) {
    const Bytes head = shared_file(name, kFileKindHeadBytes);
    EXPECT_FALSE(describe_foreign_file(head.data(), head.size(), head.size(), out, sizeof out, ExpectedFile::kTokenizer))
        << name << ": " << out;
  }
}

TEST(FileKind, CliPrintsOneLineAndExitsOne) {
  const std::string path = test::temp_dir() + "/stories15M.bin";
  test::write_file(path, text("version https://git-lfs.github.com/spec/v1\noid sha256:00\nsize 60816028\n"));
  for (const char* command : {"run", "plan", "inspect"}) {
    std::vector<std::string> args = {command, path};
    // Any file that opens will do as -z: the model is refused before the tokenizer is read.
    if (std::string(command) != "inspect") args.insert(args.end(), {"-z", path});
    const test::CommandResult r = test::run_pocketlm(args);
    SCOPED_TRACE(command);
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_EQ(r.err, "pocketlm: error: " + path +
                         ": this is a Git LFS pointer (of a 60816028-byte file), not the file itself: run `git lfs "
                         "pull` in its repository\n");
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
  // The program itself, given as the model.
  const test::CommandResult elf = test::run_pocketlm({"inspect", test::pocketlm_binary()});
  EXPECT_EQ(elf.exit_code, 1);
  EXPECT_NE(elf.err.find("this is an ELF program"), std::string::npos) << elf.err;
}

// Without -z and with no ./tokenizer.bin, every command that runs a model used to report
// "tokenizer.bin: cannot open tokenizer file" for any bad model; the model is read first now.
TEST(FileKind, EveryCommandDiagnosesTheModelBeforeLookingForATokenizer) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin");
  if (test::file_exists("tokenizer.bin")) GTEST_SKIP() << "./tokenizer.bin exists";
  const std::string dir = test::temp_dir();
  const std::string osk = dir + "/script.osk", text_file = dir + "/story.txt";
  test::write_file(osk, {'H', 0, 'i', 0, 0, 0});
  test::write_file(text_file, text("Once upon a time there was a cat.\n"));
  // Every recogniser's case, and a truncated checkpoint.
  std::vector<std::pair<std::string, Bytes>> models = {{"truncated.bin", shared_file("stories260K.bin", 1000)}};
  for (const KindCase& c : kind_cases())
    if (!c.shared || test::first_missing({std::string("models/") + c.shared}).empty()) models.push_back({c.name, c.bytes});
  for (const auto& [name, bytes] : models) {
    const std::string path = dir + "/" + name;
    test::write_file(path, bytes);
    const std::string expected = "pocketlm: error: " + error_of(bytes).replace(0, 9, path) + "\n";  // "model.bin"
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"run", path}, {"plan", path}, {"bench", path}, {"eval", path, text_file},
          {"chat", path}, {"console", path, "--osk", osk, "--png", dir + "/out.png"}}) {
      SCOPED_TRACE(args[0] + " " + name);
      const test::CommandResult r = test::run_pocketlm(args);
      EXPECT_EQ(r.exit_code, 1);
      EXPECT_EQ(r.err, expected);
      EXPECT_TRUE(r.out.empty()) << r.out;
    }
  }
}

}  // namespace
}  // namespace pocketlm
