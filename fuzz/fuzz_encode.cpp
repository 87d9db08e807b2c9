// Fuzzes Tokenizer::encode on arbitrary bytes (any UTF-8 or not) with the real tok512 and
// tokenizer.bin (32000) vocabularies; every id must be in range and decodable.
#include "fuzz_common.h"

using namespace pocketlm;

namespace {
const fuzz::LoadedTokenizer& load(const char* name, std::int32_t vocab) {
  const std::vector<unsigned char>& bytes = fuzz::shared_file(name);
  auto* t = new fuzz::LoadedTokenizer(bytes.data(), bytes.size(), vocab, name);
  if (!t->ok()) {
    std::fprintf(stderr, "fuzz: %s\n", t->status().message());
    std::abort();
  }
  return *t;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const fuzz::LoadedTokenizer& tok512 = load("tok512.bin", 512);
  static const fuzz::LoadedTokenizer& tok32k = load("tokenizer.bin", 32000);
  if (size > 65536) return 0;  // keep runs fast (encode is O(n log n))
  std::vector<std::int32_t> tokens((size + 3) * Tokenizer::kEncodeWordsPerSlot);
  for (const fuzz::LoadedTokenizer* lt : {&tok512, &tok32k}) {
    const Tokenizer& t = lt->get();
    int n = 0;
    const bool bos = size > 0 && (data[0] & 1);
    if (!t.encode(reinterpret_cast<const char*>(data), size, bos, !bos, tokens.data(), tokens.size(), &n).ok())
      std::abort();  // a large enough buffer: encode cannot fail
    if (n < 0 || static_cast<std::size_t>(n) > size + 3) std::abort();
    std::int32_t prev = kBosToken;
    for (int i = 0; i < n; ++i) {
      if (tokens[i] < 0 || tokens[i] >= t.vocab_size()) std::abort();
      t.decode(prev, tokens[i]);
      prev = tokens[i];
    }
  }
  return 0;
}
