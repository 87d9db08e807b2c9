// The heap-based merge (text/tokenizer_merge.cpp) against a plain reimplementation of run.c's
// quadratic encode loop, on real text, random bytes, random code points, runs of vocabulary
// pieces and synthetic vocabularies full of tied scores; and inputs long enough that the
// quadratic loop would take hours.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "pocketlm/io/memory_storage.h"
#include "tokenizer_support.h"

namespace pocketlm {
namespace {

using test::encode;
using test::load;
using test::load_file;
using test::make_tokenizer;

std::string piece_text(const Tokenizer& tok, int id) {
  const Piece p = tok.piece(id);
  return std::string(reinterpret_cast<const char*>(p.data), p.size);
}

// run.c's encode, statement for statement: the code points (or their bytes + 3), then
// "while (1) { scan every adjacent pair, keep the best score > -1e10 (strictly greater, so
// the leftmost on ties), merge it, shift the rest down }".
std::vector<int> runc_encode(const Tokenizer& tok, const std::string& text, bool bos, bool eos) {
  std::vector<int> t;
  if (bos) t.push_back(tok.bos_id());
  if (!text.empty()) {
    const int dummy = tok.lookup(reinterpret_cast<const unsigned char*>(" "), 1);
    if (dummy >= 0) t.push_back(dummy);
  }
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  for (std::size_t i = 0; i < text.size();) {
    std::size_t end = i + 1;
    while (end < text.size() && (s[end] & 0xC0) == 0x80 && end - i < 4) ++end;
    const int id = tok.lookup(s + i, end - i);
    if (id >= 0)
      t.push_back(id);
    else
      for (std::size_t k = i; k < end; ++k) t.push_back(s[k] + 3);
    i = end;
  }
  while (true) {
    float best_score = -1e10f;
    int best_id = -1;
    std::size_t best_idx = 0;
    for (std::size_t i = 0; i + 1 < t.size(); ++i) {
      const std::string merged = piece_text(tok, t[i]) + piece_text(tok, t[i + 1]);
      const int id = tok.lookup(reinterpret_cast<const unsigned char*>(merged.data()), merged.size());
      if (id != -1 && tok.score(id) > best_score) {
        best_score = tok.score(id);
        best_id = id;
        best_idx = i;
      }
    }
    if (best_id == -1) break;
    t[best_idx] = best_id;
    t.erase(t.begin() + static_cast<std::ptrdiff_t>(best_idx) + 1);
  }
  if (eos) t.push_back(tok.eos_id());
  return t;
}

void expect_same(const Tokenizer& tok, const std::string& text, bool bos, bool eos, const std::string& what) {
  ASSERT_EQ(encode(tok, text, bos, eos), runc_encode(tok, text, bos, eos)) << what << ": \"" << text << "\"";
}

// Real text: a run of TinyStories validation stories (shared/ only; the tests needing it skip).
constexpr const char* kSample = "data/tinystories-valid-sample.txt";

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// The first `count` stories of the validation sample (split at <|endoftext|> lines).
std::vector<std::string> sample_stories(std::size_t count) {
  const std::string text = read_text(test::find_file(kSample));
  std::vector<std::string> out;
  std::size_t at = 0;
  while (out.size() < count && at < text.size()) {
    std::size_t end = text.find("<|endoftext|>", at);
    if (end == std::string::npos) end = text.size();
    out.push_back(text.substr(at, end - at));
    at = end + 13;
  }
  return out;
}

// A random UTF-8 string: ASCII letters and spaces, 2- to 4-byte code points, stray bytes.
std::string random_text(std::mt19937& rng, std::size_t len) {
  static const char* kParts[] = {"a", "e", "the", " ", " ", "n", "s", ".", ",", "\n", "\xC3\xA9", "\xE6\x97\xA5",
                                 "\xF0\x9F\x90\x89", "\x80", "\xFF", "\xC3", "'", "Lily", "\t", "0"};
  std::string s;
  while (s.size() < len) s += kParts[rng() % (sizeof kParts / sizeof kParts[0])];
  return s;
}

std::string random_bytes(std::mt19937& rng, std::size_t len) {
  std::string s(len, '\0');
  for (char& c : s) c = static_cast<char>(rng() & 0xFF);
  return s;
}

// Pieces of the vocabulary back to back (a space read from "▁" pieces): long merge chains.
std::string random_pieces(std::mt19937& rng, const Tokenizer& tok, std::size_t count) {
  std::string s;
  for (std::size_t i = 0; i < count; ++i) s += piece_text(tok, 259 + static_cast<int>(rng() % (tok.vocab_size() - 259)));
  return s;
}

TEST(TokenizerMerge, MatchesRunCsLoopOnRealAndRandomText) {
  POCKETLM_REQUIRE_FILES("models/tok512.bin", "models/tokenizer.bin", kSample);
  std::mt19937 rng(20240601);
  const auto stories = sample_stories(12);
  ASSERT_EQ(stories.size(), 12u);
  for (const char* name : {"tok512.bin", "tokenizer.bin"}) {
    auto l = load_file(name, name[3] == '5' ? 512 : 32000);
    const Tokenizer& tok = l->tok;
    for (const std::string& story : stories) expect_same(tok, story, true, false, name);
    for (int i = 0; i < 60; ++i) {
      const bool bos = rng() & 1, eos = rng() & 1;
      expect_same(tok, random_text(rng, rng() % 300), bos, eos, name);
      expect_same(tok, random_bytes(rng, rng() % 100), bos, eos, name);
      expect_same(tok, random_pieces(rng, tok, rng() % 60), bos, eos, name);
    }
    for (const char* s : {"", " ", "  ", "a", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "\n\n\n\n", "ab ab ab ab ab ab"})
      expect_same(tok, s, true, true, name);
  }
}

// Few letters, short pieces and scores from a handful of values (ties everywhere, 0.0 and
// -0.0 compare equal, some never merge): the tie rule and stale heap entries get exercised.
TEST(TokenizerMerge, MatchesRunCsLoopOnVocabulariesOfTiedScores) {
  std::mt19937 rng(7);
  const float kScores[] = {0.0f, -0.0f, 1.0f, 1.0f, -1.0f, 2.5f, -3e10f, 1e30f};
  const char kLetters[] = "ab c";
  for (int v = 0; v < 40; ++v) {
    std::vector<std::pair<std::string, float>> extra = {{" ", 0.0f}, {"a", 0.0f}, {"b", 0.0f}, {"c", 0.0f}};
    const int pieces = 5 + static_cast<int>(rng() % 40);
    for (int p = 0; p < pieces; ++p) {
      std::string s;
      const std::size_t len = 2 + rng() % 5;
      for (std::size_t k = 0; k < len; ++k) s += kLetters[rng() % 4];
      extra.push_back({s, kScores[rng() % (sizeof kScores / sizeof kScores[0])]});
    }
    // Merges through byte-fallback pieces: "<0x64>" is the fallback spelling of 'd'.
    extra.push_back({"<0x64>a", 1.0f});
    extra.push_back({"a<0x64>", 1.0f});
    const auto bytes = make_tokenizer(extra);
    MemoryStorage storage(bytes.data(), bytes.size(), "synthetic");
    auto l = load(storage, static_cast<std::int32_t>(259 + extra.size()));
    ASSERT_TRUE(l->status.ok()) << l->status.message();
    for (int i = 0; i < 40; ++i) {
      std::string text;
      const std::size_t len = rng() % 80;
      for (std::size_t k = 0; k < len; ++k) text += "ab cd"[rng() % 5];
      expect_same(l->tok, text, rng() & 1, rng() & 1, "vocabulary " + std::to_string(v));
    }
  }
}

// 1 MiB of stories with random bytes mixed in: run.c's loop would take hours (about n^2 / 2
// pair lookups), the heap a second or two. No timed assertion: ctest's timeout bounds it.
TEST(TokenizerMerge, AMegabyteEncodesAndDecodesBack) {
  POCKETLM_REQUIRE_FILES("models/tok512.bin", "models/tokenizer.bin", kSample);
  const std::string sample = read_text(test::find_file(kSample));
  ASSERT_FALSE(sample.empty());
  std::mt19937 rng(1);
  std::string text;
  while (text.size() < (1u << 20)) text += sample.substr(0, 60000) + random_bytes(rng, 64);
  for (const char* name : {"tok512.bin", "tokenizer.bin"}) {
    auto l = load_file(name, name[3] == '5' ? 512 : 32000);
    const std::vector<int> ids = encode(l->tok, text);
    ASSERT_GT(ids.size(), text.size() / static_cast<std::size_t>(l->tok.longest_piece()));
    std::string back;
    for (std::size_t i = 1; i < ids.size(); ++i) back += test::decode(l->tok, ids[i - 1], ids[i]);
    EXPECT_TRUE(back == text) << name;
  }
}

// The lower bound the context checks use (Tokenizer::min_tokens) holds on real text.
TEST(TokenizerMerge, MinTokensIsALowerBound) {
  POCKETLM_REQUIRE_FILES("models/tok512.bin", "models/tokenizer.bin");
  std::mt19937 rng(3);
  for (const char* name : {"tok512.bin", "tokenizer.bin"}) {
    auto l = load_file(name, name[3] == '5' ? 512 : 32000);
    for (int i = 0; i < 50; ++i) {
      const std::string text = i % 2 ? random_text(rng, rng() % 400) : random_pieces(rng, l->tok, rng() % 50);
      EXPECT_LE(l->tok.min_tokens(text.size()), encode(l->tok, text, false, false).size()) << name << ": " << text;
    }
  }
  // An empty byte-fallback piece spells a byte with no piece bytes: no bound beyond one token.
  auto records = test::base_records();
  records[3].first.clear();  // <0x00>
  records.push_back({"a", 0.0f});
  const auto bytes = test::tokenizer_bytes(records, 8);
  MemoryStorage storage(bytes.data(), bytes.size(), "empty-byte");
  auto l = load(storage, 260);
  ASSERT_TRUE(l->status.ok()) << l->status.message();
  EXPECT_EQ(l->tok.min_tokens(1000), 1u);
  EXPECT_EQ(l->tok.min_tokens(0), 0u);
}

}  // namespace
}  // namespace pocketlm
