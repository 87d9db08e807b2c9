// Fuzzes tokenizer.bin parsing: the first two input bytes pick vocab_size (1..4096), the
// rest is the file. When it loads, a fixed text is encoded and every id is decoded.
#include <cstring>

#include "fuzz_common.h"

using namespace pocketlm;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  const std::int32_t vocab = 1 + ((data[0] | data[1] << 8) % 4096);
  fuzz::LoadedTokenizer tok(data + 2, size - 2, vocab, "fuzz-tokenizer.bin");
  if (!tok.ok()) return 0;
  const Tokenizer& t = tok.get();
  static const char kText[] = "Once upon a time, Zo\xC3\xAB saw a \xF0\x9F\x90\x89 and \xE6\x97\xA5.\n";
  std::int32_t tokens[(sizeof kText + 3) * Tokenizer::kEncodeWordsPerSlot];
  int n = 0;
  if (t.encode(kText, std::strlen(kText), true, true, tokens, sizeof tokens / sizeof tokens[0], &n).ok()) {
    for (int i = 0; i < n; ++i)
      if (tokens[i] < 0 || tokens[i] >= vocab) std::abort();  // encode must stay in the vocabulary
  }
  std::size_t total = 0;
  for (std::int32_t id = 0; id < vocab; ++id) {
    const Piece p = t.decode(id == 0 ? kBosToken : id - 1, id);
    for (std::size_t k = 0; k < p.size; ++k) total += p.data[k];  // touch every byte
  }
  return static_cast<int>(total & 0);
}
