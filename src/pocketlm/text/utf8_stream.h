// Utf8Stream: turns a stream of decoded pieces into valid UTF-8. Byte-fallback tokens
// spell one character over several tokens (<0xF0><0x9F><0x90><0x89>); run.c prints each
// byte on its own and drops the non-ASCII ones, losing the character. Here bytes are held
// until their character is complete; a byte sequence that cannot be UTF-8 becomes U+FFFD,
// so what reaches stdout is always valid UTF-8.
#pragma once

#include <cstddef>

namespace pocketlm {

// Receives complete, valid UTF-8 text.
using TextSink = void (*)(const char* text, std::size_t len, void* ctx);

class Utf8Stream {
 public:
  Utf8Stream(TextSink sink, void* ctx) : sink_(sink), ctx_(ctx) {}

  // Feeds raw bytes; emits every character they complete.
  void write(const unsigned char* bytes, std::size_t len);
  // Feeds one decoded piece with run.c's safe_printf rule: a one-byte piece that is an ASCII
  // control character other than whitespace is dropped; everything else is written.
  void write_piece(const unsigned char* bytes, std::size_t len);
  // Ends the stream: an unfinished character becomes U+FFFD.
  void flush();

 private:
  void put(unsigned char byte);
  void emit(const unsigned char* bytes, std::size_t len) { sink_(reinterpret_cast<const char*>(bytes), len, ctx_); }
  void emit_replacement();

  TextSink sink_;
  void* ctx_;
  unsigned char pending_[4] = {};
  int have_ = 0;  // bytes of the current character held
  int need_ = 0;  // continuation bytes still expected
  unsigned char lo_ = 0x80, hi_ = 0xBF;  // allowed range of the next continuation byte
};

}  // namespace pocketlm
