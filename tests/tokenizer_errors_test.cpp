// Hostile tokenizer files: each is a one-line kBadFormat error naming the file, the field or
// record and the value — never a crash or a read past the end — and a tokenizer whose record
// count disagrees with the model's vocab_size is refused by the CLI with exit code 1.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "pocketlm/io/memory_storage.h"
#include "pocketlm/memory/arena.h"
#include "pocketlm/text/tokenizer.h"
#include "golden_models.h"
#include "test_support.h"

namespace pocketlm {
namespace {

using test::put_f32;
using test::put_i32;
using Bytes = std::vector<unsigned char>;

// A record: score, then the length field (normally the piece's size) and the piece bytes.
struct Record {
  std::string piece;
  std::int32_t length_field;
};
Record rec(const std::string& piece) { return {piece, static_cast<std::int32_t>(piece.size())}; }

Bytes tokenizer_bytes(std::int32_t max_token_length, const std::vector<Record>& records) {
  Bytes out;
  put_i32(out, max_token_length);
  float score = 0.0f;
  for (const Record& r : records) {
    put_f32(out, score -= 1.0f);
    put_i32(out, r.length_field);
    out.insert(out.end(), r.piece.begin(), r.piece.end());
  }
  return out;
}

// Five well-formed records, the longest 4 bytes.
std::vector<Record> five() { return {rec("<unk>"), rec("<s>"), rec("</s>"), rec("a"), rec("ab")}; }

// tokenizer_bytes() with the score of each record in `which` replaced by `score`.
Bytes with_score(std::int32_t max_token_length, const std::vector<Record>& records, const std::vector<int>& which,
                 float score) {
  Bytes out = tokenizer_bytes(max_token_length, records);
  std::size_t at = 4;
  for (int i = 0; i < static_cast<int>(records.size()); ++i) {
    if (std::find(which.begin(), which.end(), i) != which.end()) std::memcpy(out.data() + at, &score, 4);
    at += 8 + records[i].piece.size();
  }
  return out;
}

// Sizes the tables from the file, carves them into an owned arena and loads the file through
// a 7-byte chunk buffer (so every record straddles chunk boundaries).
Status load(const Bytes& bytes, std::int32_t vocab_size) {
  MemoryStorage storage(bytes.data(), bytes.size(), "tok.bin");
  std::uint64_t piece_bytes = 0;
  POCKETLM_TRY(Tokenizer::piece_bytes(storage, vocab_size, &piece_bytes));
  Arena arena;
  POCKETLM_TRY(arena.init_owned(piece_bytes + 16 * static_cast<std::uint64_t>(vocab_size) + 256));
  Tokenizer tok;
  POCKETLM_TRY(tok.carve(vocab_size, piece_bytes, arena));
  unsigned char chunk[7];
  return tok.load(storage, chunk, sizeof chunk);
}

struct BadCase {
  std::string name;
  Bytes bytes;
  std::int32_t vocab_size;
  std::vector<std::string> needles;  // field/record and value, as they must appear
};

void PrintTo(const BadCase& c, std::ostream* os) { *os << c.name; }

std::vector<BadCase> bad_cases() {
  std::vector<Record> negative = five();
  negative[3].length_field = -1;
  std::vector<Record> trailing = five();
  trailing.push_back(rec("b"));
  Bytes one_extra_byte = tokenizer_bytes(5, five());
  one_extra_byte.push_back('x');
  return {
      // The file is too small even for vocab_size empty records.
      // Whole records, but not the model's count: another model's tokenizer, said in pieces.
      {"TooFewRecordsForHeaderSizes", tokenizer_bytes(5, {rec("<unk>")}), 5,
       {"tokenizer holds 1 piece but the model's vocab_size is 5", "-z"}},
      // Big enough for five empty records, but the three long pieces use up the bytes that
      // would have been records 3 and 4: record 1's piece runs past the end.
      {"TooFewRecords",
       tokenizer_bytes(16, {rec("<unk>-long"), rec("<s>-long"), rec("</s>-long")}),
       5,
       {"record 1", "piece length 8", "fewer records", "vocab_size = 5"}},
      {"NegativePieceLength", tokenizer_bytes(5, negative), 5, {"record 3", "piece length -1"}},
      {"PieceLongerThanMaxTokenLength", tokenizer_bytes(3, five()), 5,
       {"record 0", "piece length 5", "max_token_length = 3"}},
      {"MaxTokenLengthZero", tokenizer_bytes(0, five()), 5, {"max_token_length = 0", "must be positive"}},
      {"MaxTokenLengthNegative", tokenizer_bytes(-7, five()), 5, {"max_token_length = -7", "must be positive"}},
      {"MoreRecordsThanVocab", tokenizer_bytes(5, trailing), 5, {"tokenizer holds 6 pieces but the model's vocab_size is 5"}},
      {"OneTrailingByte", one_extra_byte, 5, {"1 bytes after record 4", "vocab_size = 5"}},
      // run.c would never merge into a NaN-scored piece: a corrupt file, not a vocabulary.
      {"NaNScore", with_score(5, five(), {3}, std::numeric_limits<float>::quiet_NaN()), 5,
       {"tokenizer.bin score of token 3 is NaN (bits " + test::float_bits_hex(std::numeric_limits<float>::quiet_NaN()) + ")"}},
      {"EveryScoreNaN", with_score(5, five(), {0, 1, 2, 3, 4}, -std::numeric_limits<float>::quiet_NaN()), 5,
       {"tokenizer.bin score of token 0 is NaN (bits " + test::float_bits_hex(-std::numeric_limits<float>::quiet_NaN()) + ")"}},
  };
}

class BadTokenizer : public ::testing::TestWithParam<BadCase> {};

TEST_P(BadTokenizer, OneLineErrorNamingFileFieldAndValue) {
  const BadCase& c = GetParam();
  const Status st = load(c.bytes, c.vocab_size);
  ASSERT_FALSE(st.ok());
  const std::string msg = st.message();
  EXPECT_EQ(st.code(), StatusCode::kBadFormat) << msg;
  EXPECT_EQ(msg.rfind("tok.bin: ", 0), 0u) << msg;
  EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  for (const auto& n : c.needles) EXPECT_NE(msg.find(n), std::string::npos) << "missing '" << n << "' in: " << msg;
}

INSTANTIATE_TEST_SUITE_P(Tokenizer, BadTokenizer, ::testing::ValuesIn(bad_cases()),
                         [](const ::testing::TestParamInfo<BadCase>& info) { return info.param.name; });

TEST(GoodTokenizer, FiveRecordsLoad) {
  const Status st = load(tokenizer_bytes(5, five()), 5);
  EXPECT_TRUE(st.ok()) << st.message();
}

// stories260K has vocab_size 512; tokenizer.bin holds the 32000 records of Llama 2.
TEST(TokenizerCli, VocabMismatchWithModel) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tokenizer.bin");
  const std::string model = test::model_path("stories260K.bin");
  const std::string tok = test::model_path("tokenizer.bin");
  const test::CommandResult r = test::run_pocketlm({"run", model, "-z", tok, "-n", "5", "-s", "1"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_EQ(r.err.rfind("pocketlm: error: " + tok + ": ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find("tokenizer holds 32000 pieces but the model's vocab_size is 512"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("-z"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
  // The other way round: 512 pieces for a 32000-piece model, in pieces, not bytes (the 60 MB
  // synth model is made natively only: under qemu it takes minutes).
  if (!test::emulator_prefix().empty()) return;
  POCKETLM_REQUIRE_FILES("models/tok512.bin");
  const std::string big = test::golden_model_path("synth15M.bin");
  ASSERT_FALSE(big.empty());
  const test::CommandResult small = test::run_pocketlm({"run", big, "-z", test::model_path("tok512.bin"), "-n", "5"});
  EXPECT_EQ(small.exit_code, 1);
  EXPECT_NE(small.err.find("tokenizer holds 512 pieces but the model's vocab_size is 32000"), std::string::npos)
      << small.err;
}

// tok512.bin with record 300's score made NaN: run refuses it, and convert --to gguf does not
// carry it into a GGUF (one line, exit 1, no output file).
TEST(TokenizerCli, NaNScoreIsRefusedByRunAndConvert) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
  Bytes bytes = test::read_file(test::model_path("tok512.bin"));
  std::size_t at = 4;
  for (int i = 0; i < 300; ++i) {
    std::int32_t len = 0;
    std::memcpy(&len, bytes.data() + at + 4, 4);
    at += 8 + static_cast<std::size_t>(len);
  }
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::memcpy(bytes.data() + at, &nan, 4);
  const std::string dir = test::temp_dir();
  const std::string tok = dir + "/nan.bin", out = dir + "/out.gguf";
  test::write_file(tok, bytes);
  const std::string model = test::model_path("stories260K.bin");
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"run", model, "-z", tok, "-n", "4"},
        std::vector<std::string>{"convert", model, "--to", "gguf", "-z", tok, "-o", out}}) {
    const test::CommandResult r = test::run_pocketlm(args);
    EXPECT_EQ(r.exit_code, 1) << args[0];
    EXPECT_EQ(r.err, "pocketlm: error: " + tok + ": tokenizer.bin score of token 300 is NaN (bits " +
                         test::float_bits_hex(nan) + "): merge scores must be numbers\n");
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
  EXPECT_FALSE(test::file_exists(out));
}

// -z given what is not a tokenizer.bin: the error says what the file is (it used to name a
// record field of bytes that were never records, or a tokenizer "of 12 bytes").
TEST(TokenizerCli, ZGivenAModelOrAPageSaysWhatTheFileIs) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
  const std::string model = test::model_path("stories260K.bin");
  const std::string dir = test::temp_dir(), page = dir + "/page.html", note = dir + "/note.txt";
  test::write_file(page, Bytes({'<', 'h', 't', 'm', 'l', '>', '\n'}));
  test::write_file(note, Bytes({'4', '0', '4', '\n'}));
  const std::string gguf = test::stories260k_gguf();
  const std::vector<std::pair<std::string, std::string>> cases = {
      {gguf, "this is a GGUF v3 model file, not a llama2.c tokenizer.bin (a GGUF model carries its own tokenizer: drop -z)"},
      {model, "this is a llama2.c checkpoint, not a tokenizer.bin: give it as the model and the tokenizer.bin with -z"},
      {page, "this is an HTML page, not a tokenizer: the download saved a web page"},
      {note, "this is a text file ('404'), not a tokenizer"},
  };
  for (const auto& [z, message] : cases) {
    for (const char* command : {"run", "plan"}) {
      const test::CommandResult r = test::run_pocketlm({command, model, "-z", z});
      SCOPED_TRACE(std::string(command) + " -z " + z);
      EXPECT_EQ(r.exit_code, 1);
      EXPECT_EQ(r.err.rfind("pocketlm: error: " + z + ": " + message, 0), 0u) << r.err;
      EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    }
  }
}

// -z replaces a GGUF's own tokenizer, as asked, with one warning line saying so.
TEST(TokenizerCli, ZOverridesAGgufsOwnTokenizerWithOneWarning) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
  const std::string gguf = test::stories260k_gguf(), tok = test::model_path("tok512.bin");
  const std::string warning =
      "pocketlm: warning: -z: using the tokenizer " + tok + "; " + gguf + "'s own tokenizer is ignored\n";
  const test::CommandResult r = test::run_pocketlm({"run", gguf, "-z", tok, "-n", "8", "-t", "0"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(r.out.empty());
  EXPECT_EQ(r.err.rfind(warning, 0), 0u) << r.err;
  EXPECT_EQ(r.err.find("warning", warning.size()), std::string::npos) << r.err;
  // Without -z: its own, no warning.
  const test::CommandResult own = test::run_pocketlm({"run", gguf, "-n", "8", "-t", "0"});
  EXPECT_EQ(own.exit_code, 0) << own.err;
  EXPECT_EQ(own.err.find("warning"), std::string::npos) << own.err;
  EXPECT_EQ(own.out, r.out);  // the same vocabulary either way
}

}  // namespace
}  // namespace pocketlm
