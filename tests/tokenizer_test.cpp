// Encode/decode against llama2.c's semantics: the real tokenizers' golden encodings,
// byte fallback, merge order (best score, leftmost on ties), empty prompts, BOS handling.
#include <gtest/gtest.h>

#include <cstring>
#include <nlohmann/json.hpp>
#include <memory>
#include <string>
#include <vector>

#include "golden_models.h"
#include "ports/posix/file_storage.h"
#include "pocketlm/io/memory_storage.h"
#include "pocketlm/text/tokenizer.h"
#include "test_support.h"
#include "tokenizer_support.h"

namespace pocketlm {
namespace {

using test::decode;
using test::encode;
using test::load;
using test::load_file;
using test::make_tokenizer;
using test::put_f32;
using test::put_i32;

TEST(Tokenizer, MatchesEveryGoldenPromptEncoding) {
  POCKETLM_REQUIRE_FILES("models/tok512.bin", "models/tokenizer.bin");
  const std::vector<nlohmann::json>& cases = test::golden_cases();
  ASSERT_FALSE(cases.empty()) << "cannot read " << test::golden_runs_path();
  auto tok512 = load_file("tok512.bin", 512);
  auto tok32k = load_file("tokenizer.bin", 32000);
  int checked = 0;
  for (const auto& c : cases) {
    const std::string text = c["prompt"].is_null() ? "" : c["prompt"].get<std::string>();
    const Tokenizer& tok = c["tokenizer"] == "tok512.bin" ? tok512->tok : tok32k->tok;
    EXPECT_EQ(encode(tok, text), c["prompt_tokens"].get<std::vector<int>>()) << c["name"];
    ++checked;
  }
  EXPECT_GE(checked, 10);
}

TEST(Tokenizer, EmptyTextIsJustBos) {
  POCKETLM_REQUIRE_FILES("models/tok512.bin");
  auto l = load_file("tok512.bin", 512);
  EXPECT_EQ(encode(l->tok, ""), (std::vector<int>{1}));
  EXPECT_EQ(encode(l->tok, "", false, false), (std::vector<int>{}));
  EXPECT_EQ(encode(l->tok, "", true, true), (std::vector<int>{1, 2}));
}

TEST(Tokenizer, ByteFallbackForUnknownCharacters) {
  POCKETLM_REQUIRE_FILES("models/tok512.bin");
  auto l = load_file("tok512.bin", 512);
  // U+1F409 is not in a 512-piece vocabulary: its four bytes become ids byte + 3.
  const std::vector<int> ids = encode(l->tok, "\xF0\x9F\x90\x89");
  ASSERT_GE(ids.size(), 5u);
  EXPECT_EQ(std::vector<int>(ids.end() - 4, ids.end()), (std::vector<int>{0xF0 + 3, 0x9F + 3, 0x90 + 3, 0x89 + 3}));
}

TEST(Tokenizer, DecodesBytePiecesAndStripsSpaceAfterBos) {
  POCKETLM_REQUIRE_FILES("models/tok512.bin", "models/tokenizer.bin");
  auto l = load_file("tokenizer.bin", 32000);
  EXPECT_EQ(decode(l->tok, 5, 13), "\n");  // <0x0A>
  EXPECT_EQ(decode(l->tok, 5, 3 + 0xF0), "\xF0");
  const int once = encode(l->tok, "Once")[1];
  EXPECT_EQ(decode(l->tok, 1, once), "Once");    // after BOS the leading space goes
  EXPECT_EQ(decode(l->tok, 42, once), " Once");  // elsewhere it stays
}

TEST(Tokenizer, EncodeDecodeRoundTripsText) {
  POCKETLM_REQUIRE_FILES("models/tok512.bin", "models/tokenizer.bin");
  auto l = load_file("tokenizer.bin", 32000);
  const std::string text = "Hello, world! Zo\xC3\xAB saw a \xF0\x9F\x90\x89 in 2024.";
  const std::vector<int> ids = encode(l->tok, text);
  std::string back;
  for (std::size_t i = 1; i < ids.size(); ++i) back += decode(l->tok, ids[i - 1], ids[i]);
  EXPECT_EQ(back, text);
}

TEST(Tokenizer, MergesBestScoreFirstLeftmostOnTies) {
  // "abc": pairs ab (score 1) and bc (score 2): bc merges first, then a+bc has no piece.
  auto bytes = make_tokenizer({{" ", -100}, {"a", 0}, {"b", 0}, {"c", 0}, {"ab", 1}, {"bc", 2}, {"abc", 0.5f}});
  MemoryStorage s(bytes.data(), bytes.size(), "synthetic");
  auto l = load(s, 266);
  ASSERT_TRUE(l->status.ok()) << l->status.message();
  const int space = 259, a = 260, b = 261, c = 262, ab = 263, bc = 264, abc = 265;
  // " abc" -> [BOS, " ", a, b, c] -> bc (2) -> [" ", a, bc] -> a+bc = "abc" (0.5) -> [" ", abc]
  EXPECT_EQ(encode(l->tok, "abc"), (std::vector<int>{1, space, abc}));
  // "abab": ab at 0 and 2 tie; the leftmost merges first, then the other.
  EXPECT_EQ(encode(l->tok, "abab"), (std::vector<int>{1, space, ab, ab}));
  // "cab": only ab merges.
  EXPECT_EQ(encode(l->tok, "cab"), (std::vector<int>{1, space, c, ab}));
  (void)a;
  (void)b;
  (void)bc;
}

TEST(Tokenizer, ScoresAtOrBelowMinusOneE10NeverMerge) {
  auto bytes = make_tokenizer({{" ", 0}, {"a", 0}, {"b", 0}, {"ab", -2e10f}});
  MemoryStorage s(bytes.data(), bytes.size(), "synthetic");
  auto l = load(s, 263);
  ASSERT_TRUE(l->status.ok());
  EXPECT_EQ(encode(l->tok, "ab"), (std::vector<int>{1, 259, 260, 261}));
}

TEST(Tokenizer, NoDummyPrefixWhenTheVocabularyHasNoSpace) {
  auto bytes = make_tokenizer({{"a", 0}});
  MemoryStorage s(bytes.data(), bytes.size(), "synthetic");
  auto l = load(s, 260);
  ASSERT_TRUE(l->status.ok());
  EXPECT_EQ(encode(l->tok, "a"), (std::vector<int>{1, 259}));
}

// Found by fuzz/fuzz_tokenizer_load: a vocabulary smaller than the byte-fallback ids
// (3..258) or than BOS/EOS made encode index past the end of the tables; now an error.
TEST(Tokenizer, VocabularyWithoutByteTokensRejectsUnknownBytes) {
  const unsigned char crash[] = {0x05, 0, 0, 0, 0, 0, 0, 0, 0x01, 0, 0, 0, 'a', 0, 0, 0, 0,
                                 0x01, 0, 0, 0, 'b', 0, 0, 0, 0, 0x02, 0, 0, 0, 'a', 'b', 0, 0, 0, 0,
                                 0x01, 0, 0, 0, ' '};  // max_len 5; "a", "b", "ab", " "
  MemoryStorage s(crash, sizeof crash, "tiny.bin");
  auto l = load(s, 4);
  ASSERT_TRUE(l->status.ok()) << l->status.message();
  EXPECT_EQ(encode(l->tok, "ab a", false, false), (std::vector<int>{3, 2, 3, 0}));  // " ", "ab", " ", "a"
  const std::string text = "Once";
  std::int32_t ids[64];
  int n = 0;
  const Status st = l->tok.encode(text.c_str(), text.size(), false, false, ids, 64, &n);
  EXPECT_EQ(st.code(), StatusCode::kBadFormat);
  EXPECT_NE(std::string(st.message()).find("byte 0x4F at offset 0"), std::string::npos) << st.message();
  EXPECT_TRUE(l->tok.encode("a", 1, true, true, ids, 64, &n).ok());  // BOS 1 and EOS 2 exist
}

TEST(Tokenizer, VocabularyWithoutBosOrEosRejectsThem) {
  std::vector<unsigned char> bytes;
  put_i32(bytes, 1);
  for (const char* p : {"a", "b"}) {
    put_f32(bytes, 0);
    put_i32(bytes, 1);
    bytes.push_back(static_cast<unsigned char>(*p));
  }
  MemoryStorage s(bytes.data(), bytes.size(), "two.bin");
  auto l = load(s, 2);
  ASSERT_TRUE(l->status.ok()) << l->status.message();
  std::int32_t ids[64];
  int n = 0;
  EXPECT_TRUE(l->tok.encode("ab", 2, true, false, ids, 64, &n).ok());  // BOS = 1 exists
  const Status st = l->tok.encode("ab", 2, false, true, ids, 64, &n);
  EXPECT_EQ(st.code(), StatusCode::kBadFormat);
  EXPECT_NE(std::string(st.message()).find("no EOS token"), std::string::npos) << st.message();
}

TEST(Tokenizer, TooSmallTokenBufferIsAnError) {
  POCKETLM_REQUIRE_FILES("models/tok512.bin");
  auto l = load_file("tok512.bin", 512);
  std::int32_t ids[4];
  int n = 0;
  EXPECT_FALSE(l->tok.encode("hello", 5, true, false, ids, 4, &n).ok());
}

}  // namespace
}  // namespace pocketlm
