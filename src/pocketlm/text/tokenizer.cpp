#include "pocketlm/text/tokenizer.h"

#include <algorithm>
#include <bit>
#include <cstring>

#include "pocketlm/base/checked.h"
#include "pocketlm/io/chunk_reader.h"

namespace pocketlm {

namespace {

// Compares the byte string a||b with p (unsigned bytes, a proper prefix sorts first) — the
// order strcmp gives NUL-free strings, which is how run.c sorts and searches its vocabulary.
int compare_concat(const unsigned char* a, std::size_t alen, const unsigned char* b, std::size_t blen,
                   const unsigned char* p, std::size_t plen) {
  const std::size_t total = alen + blen;
  const std::size_t m = total < plen ? total : plen;
  const std::size_t first = alen < m ? alen : m;
  if (first) {
    if (int c = std::memcmp(a, p, first)) return c;
  }
  if (b && m > alen) {
    if (int c = std::memcmp(b, p + alen, m - alen)) return c;
  }
  return total < plen ? -1 : total > plen ? 1 : 0;
}

int hex_digit(unsigned char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

// All 256 single bytes, for decoding <0xHH> pieces without a per-token buffer.
const unsigned char* byte_table() {
  static const struct Table {
    unsigned char bytes[256];
    Table() {
      for (int i = 0; i < 256; ++i) bytes[i] = static_cast<unsigned char>(i);
    }
  } kTable;
  return kTable.bytes;
}

// How many records a tokenizer.bin holds, walking their (score, length) headers, or -1 when
// they do not end exactly at the end of the file. For errors only: one read per record.
long long count_records(Storage& storage) {
  std::int32_t max_len = 0;
  if (storage.size() < 4 || !storage.read(0, &max_len, 4).ok() || max_len <= 0) return -1;
  std::uint64_t at = 4;
  long long n = 0;
  while (at + 8 <= storage.size()) {
    std::int32_t len = 0;
    if (!storage.read(at + 4, &len, 4).ok() || len < 0 || len > max_len) return -1;
    at += 8 + static_cast<std::uint64_t>(len);
    ++n;
  }
  return at == storage.size() ? n : -1;
}

// A tokenizer whose records are whole but not the model's count: another model's vocabulary.
Status vocab_mismatch(Storage& storage, int vocab_size, long long records) {
  return Status::error(StatusCode::kBadFormat,
                       "%s: tokenizer holds %lld piece%s but the model's vocab_size is %d: it is another model's "
                       "(give this model's tokenizer with -z)",
                       storage.name(), records, records == 1 ? "" : "s", vocab_size);
}

}  // namespace

Status Tokenizer::piece_bytes(Storage& storage, int vocab_size, std::uint64_t* bytes) {
  const std::uint64_t overhead = 4 + 8 * static_cast<std::uint64_t>(vocab_size);
  if (const long long records = storage.size() < overhead ? count_records(storage) : -1; records >= 0)
    return vocab_mismatch(storage, vocab_size, records);
  if (storage.size() < overhead)
    return Status::error(StatusCode::kBadFormat,
                         "%s: tokenizer file of %llu bytes cannot hold vocab_size = %d records (needs at least "
                         "%llu bytes)",
                         storage.name(), static_cast<unsigned long long>(storage.size()), vocab_size,
                         static_cast<unsigned long long>(overhead));
  *bytes = storage.size() - overhead;
  if (*bytes > UINT32_MAX)
    return Status::error(StatusCode::kBadFormat, "%s: tokenizer file of %llu bytes is too large", storage.name(),
                         static_cast<unsigned long long>(storage.size()));
  return Status();
}

Status Tokenizer::carve(int vocab_size, std::uint64_t piece_bytes, Arena& arena) {
  vocab_size_ = vocab_size;
  piece_bytes_ = piece_bytes;
  const auto n = static_cast<std::uint64_t>(vocab_size);
  void* p = nullptr;
  POCKETLM_TRY(arena.allocate(n * sizeof(float), kTokenizerRegion, &p));
  scores_ = static_cast<float*>(p);
  POCKETLM_TRY(arena.allocate((n + 1) * sizeof(std::uint32_t), kTokenizerRegion, &p));
  offsets_ = static_cast<std::uint32_t*>(p);
  POCKETLM_TRY(arena.allocate(piece_bytes, kTokenizerRegion, &p));
  pieces_ = static_cast<unsigned char*>(p);
  POCKETLM_TRY(arena.allocate(n * sizeof(std::int32_t), kTokenizerRegion, &p));
  sorted_ = static_cast<std::int32_t*>(p);
  return Status();
}

Status Tokenizer::load(Storage& storage, unsigned char* chunk, std::size_t chunk_bytes) {
  ChunkReader reader(storage, 0, chunk, chunk_bytes);
  POCKETLM_TRY(reader.take(&max_token_length_, 4));
  if (max_token_length_ <= 0)
    return Status::error(StatusCode::kBadFormat, "%s: tokenizer field max_token_length = %d must be positive",
                         storage.name(), max_token_length_);
  std::uint64_t used = 0;
  for (int i = 0; i < vocab_size_; ++i) {
    int len = 0;
    const std::uint64_t at = reader.offset();
    Status st = reader.take(&scores_[i], 4);
    if (st.ok()) st = reader.take(&len, 4);
    if (!st.ok())
      return Status::error(StatusCode::kBadFormat,
                           "%s: tokenizer record %d at offset %llu runs past the end of the file: it has fewer "
                           "records than the model's vocab_size = %d",
                           storage.name(), i, static_cast<unsigned long long>(at), vocab_size_);
    if (len < 0 || len > max_token_length_)
      return Status::error(StatusCode::kBadFormat,
                           "%s: tokenizer record %d has piece length %d outside [0, max_token_length = %d]",
                           storage.name(), i, len, max_token_length_);
    if (static_cast<std::uint64_t>(len) > piece_bytes_ - used)
      return Status::error(StatusCode::kBadFormat,
                           "%s: tokenizer record %d (piece length %d) runs past the end of the file: it has fewer "
                           "records than the model's vocab_size = %d",
                           storage.name(), i, len, vocab_size_);
    offsets_[i] = static_cast<std::uint32_t>(used);
    // The check above keeps this within the file; only a failing read can stop it.
    POCKETLM_TRY(reader.take(pieces_ + used, static_cast<std::size_t>(len)));
    used += static_cast<std::uint64_t>(len);
  }
  offsets_[vocab_size_] = static_cast<std::uint32_t>(used);
  if (const long long records = used != piece_bytes_ ? count_records(storage) : -1; records > vocab_size_)
    return vocab_mismatch(storage, vocab_size_, records);
  if (used != piece_bytes_)
    return Status::error(StatusCode::kBadFormat,
                         "%s: tokenizer has %llu bytes after record %d: it holds more pieces than the model's "
                         "vocab_size = %d",
                         storage.name(), static_cast<unsigned long long>(piece_bytes_ - used), vocab_size_ - 1,
                         vocab_size_);

  return finish_load(storage.name(), "tokenizer.bin score");
}

Status Tokenizer::check_scores(const char* file, const char* score_field, const float* scores, int n) {
  // run.c never merges into a NaN-scored piece (no comparison holds), so such a vocabulary
  // silently tokenizes differently from what its scores claim: a corrupt file. A bit test
  // (exponent all ones, mantissa non-zero) is immune to finite-math compiler flags.
  for (int i = 0; i < n; ++i) {
    const auto bits = std::bit_cast<std::uint32_t>(scores[i]);
    if ((bits & 0x7F800000u) != 0x7F800000u || (bits & 0x007FFFFFu) == 0) continue;
    return Status::error(StatusCode::kBadFormat, "%s: %s of token %d is NaN (bits 0x%08X): merge scores must be numbers",
                         file, score_field, i, static_cast<unsigned>(bits));
  }
  return Status();
}

Status Tokenizer::finish_load(const char* file, const char* score_field) {
  POCKETLM_TRY(check_scores(file, score_field, scores_, vocab_size_));
  sort_vocabulary();
  longest_piece_ = 0;
  for (int i = 0; i < vocab_size_; ++i) {
    const auto size = static_cast<int>(piece(i).size);
    if (size > longest_piece_) longest_piece_ = size;
  }
  empty_byte_piece_ = false;
  for (int i = 3; i < vocab_size_ && i <= 258; ++i)
    if (piece(i).size == 0) empty_byte_piece_ = true;
  return Status();
}

void Tokenizer::sort_vocabulary() {
  for (int i = 0; i < vocab_size_; ++i) sorted_[i] = i;
  std::sort(sorted_, sorted_ + vocab_size_, [this](int a, int b) {
    const Piece pa = piece(a), pb = piece(b);
    const int c = compare_concat(pa.data, pa.size, nullptr, 0, pb.data, pb.size);
    return c != 0 ? c < 0 : a < b;
  });
}

Piece Tokenizer::piece(int token) const {
  return Piece{pieces_ + offsets_[token], offsets_[token + 1] - offsets_[token]};
}

int Tokenizer::lookup_pair(const unsigned char* a, std::size_t alen, const unsigned char* b,
                                    std::size_t blen) const {
  // Leftmost match, so a duplicated piece resolves to one id deterministically.
  int lo = 0, hi = vocab_size_;
  while (lo < hi) {
    const int mid = lo + (hi - lo) / 2;
    const Piece p = piece(sorted_[mid]);
    if (compare_concat(a, alen, b, blen, p.data, p.size) > 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo < vocab_size_) {
    const Piece p = piece(sorted_[lo]);
    if (compare_concat(a, alen, b, blen, p.data, p.size) == 0) return sorted_[lo];
  }
  return -1;
}

int Tokenizer::lookup(const unsigned char* text, std::size_t len) const {
  return lookup_pair(text, len, nullptr, 0);
}

Status Tokenizer::encode_capacity(std::size_t len, std::size_t* entries) {
  // The merge's list links and heap are int32 slot indices.
  std::uint64_t slots = 0, words = 0;
  if (!checked_add(len, 3, &slots) || slots > static_cast<std::uint64_t>(INT32_MAX) ||
      !checked_mul(slots, kEncodeWordsPerSlot, &words) || !fits_size_t(words))
    return Status::error(StatusCode::kInvalidArgument, "prompt: %zu bytes are too long to encode", len);
  *entries = static_cast<std::size_t>(words);
  return Status();
}

std::uint64_t Tokenizer::min_tokens(std::size_t len) const {
  if (len == 0) return 0;
  if (empty_byte_piece_ || longest_piece_ <= 0) return 1;
  const auto longest = static_cast<std::uint64_t>(longest_piece_);
  return (static_cast<std::uint64_t>(len) + longest - 1) / longest;
}

Status Tokenizer::encode(const char* text, std::size_t len, bool bos, bool eos, std::int32_t* tokens,
                         std::size_t capacity, int* n_tokens) const {
  std::size_t needed = 0;
  POCKETLM_TRY(encode_capacity(len, &needed));
  if (capacity < needed)
    return Status::error(StatusCode::kInvalidArgument,
                         "prompt: %zu bytes need a token buffer of %zu entries, got %zu", len, needed, capacity);
  // A vocabulary may be too small for BOS/EOS or for the byte-fallback ids (3..258):
  // an error rather than ids past the end of the tables.
  if (bos && bos_id_ >= vocab_size_)
    return Status::error(StatusCode::kBadFormat, "tokenizer: vocab_size = %d has no BOS token (id %d)", vocab_size_,
                         bos_id_);
  if (eos && eos_id_ >= vocab_size_)
    return Status::error(StatusCode::kBadFormat, "tokenizer: vocab_size = %d has no EOS token (id %d)", vocab_size_,
                         eos_id_);
  const auto* s = reinterpret_cast<const unsigned char*>(text);
  std::size_t n = 0;
  if (bos) tokens[n++] = bos_id_;
  // SentencePiece's add_dummy_prefix: a non-empty text starts with the " " piece.
  if (len > 0) {
    const unsigned char space = ' ';
    const int dummy = lookup(&space, 1);
    if (dummy >= 0) tokens[n++] = dummy;
  }
  // One code point at a time: a lead byte plus up to three continuation bytes.
  std::size_t start = 0;
  while (start < len) {
    std::size_t end = start + 1;
    while (end < len && (s[end] & 0xC0) == 0x80 && end - start < 4) ++end;
    const int id = lookup(s + start, end - start);
    if (id >= 0) {
      tokens[n++] = id;
    } else {
      // Byte fallback: <0xHH> is id HH + 3.
      for (std::size_t i = start; i < end; ++i) {
        const int byte_id = static_cast<int>(s[i]) + 3;
        if (byte_id >= vocab_size_)
          return Status::error(StatusCode::kBadFormat,
                               "prompt: byte 0x%02X at offset %zu is not in the vocabulary and vocab_size = %d has "
                               "no byte-fallback token <0x%02X> (id %d)",
                               s[i], i, vocab_size_, s[i], byte_id);
        tokens[n++] = byte_id;
      }
    }
    start = end;
  }
  // Merge the best-scoring adjacent pair until none merges (scores at or below -1e10 never do).
  n = merge(tokens, n, len + 3);
  if (eos) tokens[n++] = eos_id_;
  *n_tokens = static_cast<int>(n);
  return Status();
}

Piece Tokenizer::decode(int prev, int token) const {
  Piece p = piece(token);
  if (prev == bos_id_ && p.size > 0 && p.data[0] == ' ') {
    ++p.data;
    --p.size;
  }
  if (p.size == 6 && p.data[0] == '<' && p.data[1] == '0' && p.data[2] == 'x' && p.data[5] == '>') {
    const int hi = hex_digit(p.data[3]), lo = hex_digit(p.data[4]);
    if (hi >= 0 && lo >= 0) return Piece{byte_table() + (hi * 16 + lo), 1};
  }
  return p;
}

}  // namespace pocketlm
