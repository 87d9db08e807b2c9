// Tokenizer: llama2.c's tokenizer.bin / tok512.bin — a SentencePiece-style BPE vocabulary
// with merge scores and byte-fallback tokens <0x00>..<0xFF> (ids 3..258).
// Encode and decode follow run.c exactly (shared/spec/llama2c-compat.md, "Tokenizer");
// all tables live in the session arena.
#pragma once

#include <cstddef>
#include <cstdint>

#include "pocketlm/io/storage.h"
#include "pocketlm/memory/arena.h"

namespace pocketlm {

struct EmbeddedTokenizer;  // format/model_spec.h

// llama2.c's special ids; models that carry their own (GGUF) set them with set_special_tokens.
inline constexpr int kBosToken = 1;
inline constexpr int kEosToken = 2;
inline constexpr const char* kTokenizerRegion = "tokenizer tables";

// A piece of text: bytes, not NUL-terminated.
struct Piece {
  const unsigned char* data = nullptr;
  std::size_t size = 0;
};

class Tokenizer {
 public:
  // Bytes of piece text a tokenizer file holds for `vocab_size` records: the file size
  // minus the 4-byte header and 8 bytes (score, length) per record. Error when the file is
  // too small to hold that many records (in pieces when its records can be counted: another
  // model's tokenizer, with a -z hint).
  static Status piece_bytes(Storage& storage, int vocab_size, std::uint64_t* bytes);

  // Refuses a NaN among scores[0..n) (kBadFormat naming `file`, `score_field` as the file
  // spells it, the token and the bits).
  static Status check_scores(const char* file, const char* score_field, const float* scores, int n);

  // Carves the tables (scores, piece offsets, piece bytes, sorted index) from the arena.
  Status carve(int vocab_size, std::uint64_t piece_bytes, Arena& arena);
  // Parses the file through `chunk` (a read buffer of chunk_bytes) and sorts the vocabulary.
  // Errors name the file, the record and the value: a negative or too long piece length, a
  // record past the end of the file (fewer records than the model's vocab_size), bytes left
  // after the last record (more records than vocab_size).
  Status load(Storage& storage, unsigned char* chunk, std::size_t chunk_bytes);
  // Fills the same tables from a model file's own vocabulary (GGUF tokenizer.ggml.tokens and
  // scores, located by the reader in `embedded`), read through `chunk` (text/gguf_tokenizer.cpp).
  // Pieces are stored as llama2.c's tokenizer.bin holds them: U+2581 as a space, and the
  // `bos_id` and `eos_id` pieces wrapped in newlines ("\n<s>\n"), so that a vocabulary converted
  // from tokenizer.bin loads back identical. carve() takes embedded.piece_bytes.
  Status load_gguf(Storage& storage, const EmbeddedTokenizer& embedded, int bos_id, int eos_id, unsigned char* chunk,
                   std::size_t chunk_bytes);

  // Words of `tokens` encode() uses per token slot (len + 3 slots: BOS, the dummy prefix, one
  // per byte, EOS): the token, its two list links and two merge-heap entries of two words
  // (text/tokenizer_merge.cpp).
  static constexpr std::size_t kEncodeWordsPerSlot = 7;
  // Entries `tokens` must hold for encode() of len bytes: the ids and the merge's scratch.
  // Error when that many entries overflow size_t or the int32 indices of the scratch.
  static Status encode_capacity(std::size_t len, std::size_t* entries);
  // The fewest tokens len bytes of text can encode to (BOS and EOS not counted), known
  // without encoding: a token spells at most longest_piece() bytes of the vocabulary, and
  // every text byte spells at least one (a code point is its own bytes, a fallback byte its
  // <0xHH> piece), so ceil(len / longest_piece()). 1 for any non-empty text when a byte-fallback
  // piece is empty (the bound then fails).
  std::uint64_t min_tokens(std::size_t len) const;

  // Encodes text[0..len) (run.c's encode): optional BOS, a dummy-prefix " " when the text is
  // non-empty, one token per UTF-8 code point (or its bytes + 3 when not in the vocabulary),
  // then greedy merges of the best-scoring adjacent pair (leftmost on ties), optional EOS.
  // `capacity` must be at least encode_capacity(len) entries; the ids come first.
  Status encode(const char* text, std::size_t len, bool bos, bool eos, std::int32_t* tokens,
                std::size_t capacity, int* n_tokens) const;

  // The text of `token` after `prev` (run.c's decode): a leading space is dropped after BOS,
  // and <0xHH> pieces stand for that one raw byte. token must be in [0, vocab_size).
  Piece decode(int prev, int token) const;
  // The raw vocabulary entry of `token`.
  Piece piece(int token) const;
  float score(int token) const { return scores_[token]; }
  // Id of an exact piece, or -1.
  int lookup(const unsigned char* text, std::size_t len) const;

  // The ids encode() adds and decode() treats as BOS (default kBosToken, kEosToken).
  void set_special_tokens(int bos_id, int eos_id) {
    bos_id_ = bos_id;
    eos_id_ = eos_id;
  }
  int bos_id() const { return bos_id_; }
  int eos_id() const { return eos_id_; }

  int vocab_size() const { return vocab_size_; }
  int max_token_length() const { return max_token_length_; }
  // Bytes of the longest piece held (at most max_token_length; BOS/EOS newlines included).
  int longest_piece() const { return longest_piece_; }

 private:
  // After either load: refuses a NaN score (check_scores), sorts the vocabulary and measures
  // the pieces for min_tokens().
  Status finish_load(const char* file, const char* score_field);
  // Orders sorted_ by piece bytes (run.c's sort).
  void sort_vocabulary();
  // run.c's merge loop over tokens[0..n) with the scratch behind them (`slots` words each);
  // returns the tokens left (text/tokenizer_merge.cpp).
  std::size_t merge(std::int32_t* tokens, std::size_t n, std::size_t slots) const;
  // Id of the piece equal to piece(left) || piece(right), or -1.
  int pair_id(std::int32_t left, std::int32_t right) const;
  // Id of the piece equal to a || b, or -1 (binary search over sorted_).
  int lookup_pair(const unsigned char* a, std::size_t alen, const unsigned char* b,
                           std::size_t blen) const;

  int vocab_size_ = 0;
  int max_token_length_ = 0;
  int longest_piece_ = 0;
  bool empty_byte_piece_ = false;  // a byte-fallback id (3..258) has an empty piece
  int bos_id_ = kBosToken;
  int eos_id_ = kEosToken;
  std::uint64_t piece_bytes_ = 0;
  float* scores_ = nullptr;          // [vocab_size]
  std::uint32_t* offsets_ = nullptr;  // [vocab_size + 1] into pieces_
  unsigned char* pieces_ = nullptr;   // all piece bytes, back to back
  std::int32_t* sorted_ = nullptr;    // [vocab_size] ids ordered by piece bytes
};

}  // namespace pocketlm
