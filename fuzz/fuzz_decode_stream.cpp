// Fuzzes streaming decode: input bytes become token ids (two bytes each, mod the vocabulary;
// the first byte picks tok512 or tokenizer.bin), decoded with Tokenizer::decode and fed
// through Utf8Stream::write_piece. Aborts unless the output is valid UTF-8.
#include <string>

#include "fuzz_common.h"
#include "pocketlm/text/utf8_stream.h"

using namespace pocketlm;

namespace {
const fuzz::LoadedTokenizer& load(const char* name, std::int32_t vocab) {
  const std::vector<unsigned char>& bytes = fuzz::shared_file(name);
  auto* t = new fuzz::LoadedTokenizer(bytes.data(), bytes.size(), vocab, name);
  if (!t->ok()) std::abort();
  return *t;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const fuzz::LoadedTokenizer& tok512 = load("tok512.bin", 512);
  static const fuzz::LoadedTokenizer& tok32k = load("tokenizer.bin", 32000);
  if (size < 1) return 0;
  const Tokenizer& t = (data[0] & 1) ? tok32k.get() : tok512.get();
  std::string out;
  Utf8Stream stream([](const char* s, std::size_t n, void* ctx) { static_cast<std::string*>(ctx)->append(s, n); },
                    &out);
  std::int32_t prev = kBosToken;
  for (std::size_t i = 1; i + 1 < size; i += 2) {
    const std::int32_t id = static_cast<std::int32_t>((data[i] | data[i + 1] << 8) % t.vocab_size());
    const Piece p = t.decode(prev, id);
    stream.write_piece(p.data, p.size);
    prev = id;
    // Every chunk handed to the sink so far must already be valid on its own.
    if (!fuzz::valid_utf8(reinterpret_cast<const unsigned char*>(out.data()), out.size())) std::abort();
  }
  stream.flush();
  if (!fuzz::valid_utf8(reinterpret_cast<const unsigned char*>(out.data()), out.size())) std::abort();
  return 0;
}
