#include "pocketlm/text/utf8_stream.h"

namespace pocketlm {

void Utf8Stream::emit_replacement() {
  static const unsigned char kReplacement[] = {0xEF, 0xBF, 0xBD};
  emit(kReplacement, 3);
}

// A decoder after the Unicode Standard's table 3-7 (well-formed UTF-8 byte sequences):
// overlongs, surrogates and code points above U+10FFFF are rejected at the first bad byte.
void Utf8Stream::put(unsigned char b) {
  if (need_ > 0) {
    if (b >= lo_ && b <= hi_) {
      pending_[have_++] = b;
      lo_ = 0x80;
      hi_ = 0xBF;
      if (--need_ == 0) {
        emit(pending_, static_cast<std::size_t>(have_));
        have_ = 0;
      }
      return;
    }
    // The held bytes cannot be completed: replace them, then read b afresh.
    emit_replacement();
    have_ = need_ = 0;
    lo_ = 0x80;
    hi_ = 0xBF;
  }
  if (b < 0x80) {
    emit(&b, 1);
    return;
  }
  if (b >= 0xC2 && b <= 0xDF) {
    need_ = 1;
  } else if (b >= 0xE0 && b <= 0xEF) {
    need_ = 2;
    if (b == 0xE0) lo_ = 0xA0;
    if (b == 0xED) hi_ = 0x9F;
  } else if (b >= 0xF0 && b <= 0xF4) {
    need_ = 3;
    if (b == 0xF0) lo_ = 0x90;
    if (b == 0xF4) hi_ = 0x8F;
  } else {
    emit_replacement();  // a stray continuation byte, C0, C1 or F5..FF
    return;
  }
  pending_[0] = b;
  have_ = 1;
}

void Utf8Stream::write(const unsigned char* bytes, std::size_t len) {
  for (std::size_t i = 0; i < len; ++i) put(bytes[i]);
}

void Utf8Stream::write_piece(const unsigned char* bytes, std::size_t len) {
  if (len == 0) return;
  if (len == 1 && bytes[0] < 0x80) {
    const unsigned char c = bytes[0];
    const bool printable = c >= 0x20 && c < 0x7F;
    const bool space = c == ' ' || (c >= '\t' && c <= '\r');
    if (!printable && !space) return;
  }
  write(bytes, len);
}

void Utf8Stream::flush() {
  if (need_ > 0) emit_replacement();
  have_ = need_ = 0;
  lo_ = 0x80;
  hi_ = 0xBF;
}

}  // namespace pocketlm
