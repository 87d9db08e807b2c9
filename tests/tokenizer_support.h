// Tokenizer helpers shared by the tokenizer tests: loading a tokenizer.bin into its own arena,
// encoding and decoding to std containers, and building synthetic vocabularies.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ports/posix/file_storage.h"
#include "pocketlm/text/tokenizer.h"
#include "test_support.h"

namespace pocketlm::test {

// A tokenizer loaded into its own arena.
struct Loaded {
  Arena arena;
  Tokenizer tok;
  Status status;
};

inline std::unique_ptr<Loaded> load(Storage& storage, std::int32_t vocab) {
  auto l = std::make_unique<Loaded>();
  std::uint64_t piece_bytes = 0;
  l->status = Tokenizer::piece_bytes(storage, vocab, &piece_bytes);
  if (!l->status.ok()) return l;
  EXPECT_TRUE(l->arena.init_owned(piece_bytes + 64 * static_cast<std::uint64_t>(vocab) + 4096).ok());
  l->status = l->tok.carve(vocab, piece_bytes, l->arena);
  if (!l->status.ok()) return l;
  unsigned char chunk[100];  // small on purpose: records straddle chunk boundaries
  l->status = l->tok.load(storage, chunk, sizeof chunk);
  return l;
}

inline std::unique_ptr<Loaded> load_file(const std::string& name, std::int32_t vocab) {
  FileStorage f;
  EXPECT_TRUE(f.open(model_path(name).c_str(), "tokenizer").ok());
  auto l = load(f, vocab);
  EXPECT_TRUE(l->status.ok()) << l->status.message();
  return l;
}

inline std::vector<int> encode(const Tokenizer& tok, const std::string& text, bool bos = true, bool eos = false) {
  std::size_t entries = 0;
  EXPECT_TRUE(Tokenizer::encode_capacity(text.size(), &entries).ok());
  std::vector<std::int32_t> ids(entries);
  int n = 0;
  const Status st = tok.encode(text.c_str(), text.size(), bos, eos, ids.data(), ids.size(), &n);
  EXPECT_TRUE(st.ok()) << st.message();
  return std::vector<int>(ids.begin(), ids.begin() + n);
}

inline std::string decode(const Tokenizer& tok, int prev, int id) {
  const Piece p = tok.decode(prev, id);
  return std::string(reinterpret_cast<const char*>(p.data), p.size);
}

// A tokenizer.bin holding these (piece, score) records.
inline std::vector<unsigned char> tokenizer_bytes(const std::vector<std::pair<std::string, float>>& records,
                                                  std::int32_t max_token_length) {
  std::vector<unsigned char> out;
  put_i32(out, max_token_length);
  for (auto& [piece, score] : records) {
    put_f32(out, score);
    put_i32(out, static_cast<std::int32_t>(piece.size()));
    out.insert(out.end(), piece.begin(), piece.end());
  }
  return out;
}

// Records 0..258: <unk>, <s>, </s>, <0x00>..<0xFF>, all scored 0.
inline std::vector<std::pair<std::string, float>> base_records() {
  std::vector<std::pair<std::string, float>> v = {{"<unk>", 0}, {"<s>", 0}, {"</s>", 0}};
  for (int b = 0; b < 256; ++b) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "<0x%02X>", b);
    v.push_back({buf, 0});
  }
  return v;
}

// Tokenizer bytes from (piece, score) pairs after base_records() (ids 259 on).
inline std::vector<unsigned char> make_tokenizer(const std::vector<std::pair<std::string, float>>& extra,
                                                 std::int32_t max_token_length = 8) {
  std::vector<std::pair<std::string, float>> v = base_records();
  v.insert(v.end(), extra.begin(), extra.end());
  return tokenizer_bytes(v, max_token_length);
}

}  // namespace pocketlm::test
