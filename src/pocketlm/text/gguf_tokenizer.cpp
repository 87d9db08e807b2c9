// Tokenizer::load_gguf: a SentencePiece vocabulary stored in a GGUF file (tokenizer.ggml.model
// "llama"), read from the offsets the GGUF reader found, in chunks, into the arena tables that
// llama2.c's tokenizer.bin fills. The mapping back to tokenizer.bin's spelling:
// - U+2581 (SentencePiece's word-boundary mark) becomes a space, as llama2.c's tokenizer.py
//   writes it;
// - the BOS and EOS pieces get a newline on each side ("<s>" -> "\n<s>\n"), as tokenizer.py
//   writes them;
// - scores are copied; a missing scores array gives every piece score 0.
// `pocketlm convert --to gguf` applies the inverse, so tok512.bin and tokenizer.bin survive the
// round trip piece for piece and score for score (tests/gguf_format_test.cpp, GgufTokenizer.RoundTripKeepsEveryPieceAndScore).
#include "pocketlm/format/gguf.h"
#include "pocketlm/format/model_spec.h"
#include "pocketlm/io/chunk_reader.h"
#include "pocketlm/text/tokenizer.h"

namespace pocketlm {

Status Tokenizer::load_gguf(Storage& storage, const EmbeddedTokenizer& t, int bos_id, int eos_id, unsigned char* chunk,
                            std::size_t chunk_bytes) {
  if (!t.present || t.count != vocab_size_ || t.piece_bytes != piece_bytes_)
    return Status::error(StatusCode::kInvalidArgument, "%s: the model's tokenizer does not match the tables carved for it",
                         storage.name());
  ChunkReader reader(storage, t.tokens_offset, chunk, chunk_bytes);
  std::uint64_t used = 0;
  int longest = 0;
  bool overflow = false;
  auto emit = [&](unsigned char b) {
    if (used < piece_bytes_)
      pieces_[used++] = b;
    else
      overflow = true;
  };
  unsigned char part[64];
  for (int i = 0; i < vocab_size_; ++i) {
    offsets_[i] = static_cast<std::uint32_t>(used);
    std::uint64_t len = 0;
    POCKETLM_TRY(reader.take(&len, 8));
    const bool wrap = i == bos_id || i == eos_id;
    if (wrap) emit('\n');
    gguf::MarkToSpace conv;
    for (std::uint64_t done = 0; done < len && !overflow;) {
      const std::size_t n = len - done < sizeof part ? static_cast<std::size_t>(len - done) : sizeof part;
      POCKETLM_TRY(reader.take(part, n));
      for (std::size_t k = 0; k < n; ++k) conv.push(part[k], emit);
      done += n;
    }
    conv.flush(emit);
    if (wrap) emit('\n');
    // The GGUF reader counted these bytes; a storage that changed since then is an error.
    if (overflow)
      return Status::error(StatusCode::kBadFormat, "%s: GGUF token %d holds more bytes than the header pass counted",
                           storage.name(), i);
    const auto size = static_cast<int>(used - offsets_[i]);
    if (size > longest) longest = size;
  }
  offsets_[vocab_size_] = static_cast<std::uint32_t>(used);
  if (used != piece_bytes_)
    return Status::error(StatusCode::kBadFormat, "%s: GGUF tokens hold %llu bytes, not the %llu the header pass counted",
                         storage.name(), static_cast<unsigned long long>(used),
                         static_cast<unsigned long long>(piece_bytes_));
  if (t.scores_offset) {
    ChunkReader scores(storage, t.scores_offset, chunk, chunk_bytes);
    POCKETLM_TRY(scores.take(scores_, static_cast<std::size_t>(vocab_size_) * sizeof(float)));
  } else {
    for (int i = 0; i < vocab_size_; ++i) scores_[i] = 0.0f;
  }
  max_token_length_ = longest > 0 ? longest : 1;
  return finish_load(storage.name(), gguf::key::kScores);
}

}  // namespace pocketlm
