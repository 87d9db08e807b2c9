#include "pocketlm/text/osk_script.h"

#include <cstring>

#include "pocketlm/text/utf8_stream.h"

namespace pocketlm {

namespace {

unsigned unit_at(const unsigned char* p) { return static_cast<unsigned>(p[0]) | static_cast<unsigned>(p[1]) << 8; }

// Whether p[0..n) is UTF-8 without a NUL byte: text, not UTF-16LE, whose strings end with 00 00.
// Utf8Stream passes well-formed UTF-8 through unchanged and replaces anything else (an overlong
// form, a surrogate, a code point past U+10FFFF, a cut sequence) with U+FFFD, so the bytes are
// UTF-8 exactly when what comes out is what went in.
bool is_utf8_text(const unsigned char* p, std::size_t n) {
  if (std::memchr(p, 0, n)) return false;
  struct Echo {
    const unsigned char* p;
    std::size_t n, at;
    bool same;
  } echo{p, n, 0, true};
  Utf8Stream stream(
      [](const char* text, std::size_t len, void* ctx) {
        auto* e = static_cast<Echo*>(ctx);
        e->same = e->same && len <= e->n - e->at && std::memcmp(text, e->p + e->at, len) == 0;
        if (e->same) e->at += len;
      },
      &echo);
  stream.write(p, n);
  stream.flush();
  return echo.same && echo.at == n;
}

}  // namespace

Status OskScript::init(const unsigned char* data, std::size_t bytes, const char* name) {
  data_ = data;
  bytes_ = bytes;
  at_ = 0;
  count_ = 0;
  if (bytes > 0 && is_utf8_text(data, bytes))
    return Status::error(StatusCode::kBadFormat,
                         "%s: looks like UTF-8 text (%zu bytes, no NUL byte), not an OSK script: expected UTF-16LE "
                         "strings, each ended by U+0000 (bytes 00 00), one per turn",
                         name, bytes);
  if (bytes % 2 != 0)
    return Status::error(StatusCode::kBadFormat, "%s: %zu bytes is not a whole number of UTF-16LE code units", name,
                         bytes);
  if (bytes >= 2 && data[0] == 0xFE && data[1] == 0xFF)
    return Status::error(StatusCode::kBadFormat, "%s: byte-order mark FE FF is big-endian; the OSK's text is UTF-16LE",
                         name);
  if (bytes >= 2 && data[0] == 0xFF && data[1] == 0xFE) at_ = 2;
  std::size_t length = 0;  // code units of the current string
  for (std::size_t i = at_; i < bytes; i += 2) {
    if (unit_at(data + i) != 0) {
      if (++length > kMaxOskUnits)
        return Status::error(StatusCode::kBadFormat,
                             "%s: string %d (at byte %zu) is longer than %zu code units, the OSK's limit", name,
                             count_ + 1, i - 2 * (length - 1), kMaxOskUnits);
      continue;
    }
    if (length == 0)
      return Status::error(StatusCode::kBadFormat, "%s: string %d (ending at byte %zu) is empty", name, count_ + 1, i);
    ++count_;
    length = 0;
  }
  if (length > 0) ++count_;
  if (count_ == 0) return Status::error(StatusCode::kBadFormat, "%s: holds no string (%zu bytes)", name, bytes);
  return Status();
}

bool OskScript::next(const unsigned char** units, std::size_t* unit_bytes) {
  if (at_ >= bytes_) return false;
  std::size_t end = at_;
  while (end < bytes_ && unit_at(data_ + end) != 0) end += 2;
  *units = data_ + at_;
  *unit_bytes = end - at_;
  at_ = end + 2;
  return true;
}

}  // namespace pocketlm
