// GGUF's byte layer (format/gguf.h has the constants): a cursor over the file through a small
// buffer, and the readers of its values (integers of any width, floats, strings, arrays, and
// the skipping of values pocketlm does not read), every length checked against the bytes left.
// format/gguf_reader.cpp maps what they read onto a ModelSpec. Internal to format/.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "pocketlm/base/status.h"
#include "pocketlm/format/gguf.h"
#include "pocketlm/io/chunk_reader.h"
#include "pocketlm/io/storage.h"

namespace pocketlm {
namespace gguf {

// The cursor's buffer: the header is read front to back through it.
inline constexpr std::size_t kParserBufferBytes = 256;

// Printable ASCII of a name for messages ('?' for the rest), in place.
void sanitize(char* s);

class Parser {
 public:
  Parser(Storage& s, std::uint64_t start, unsigned char* buffer) : s_(s), r_(s, start, buffer, kParserBufferBytes) {}

  const char* name() const { return s_.name(); }
  std::uint64_t offset() const { return r_.offset(); }
  std::uint64_t left() const { return s_.size() - r_.offset(); }

  Status u32(std::uint32_t* v) { return r_.take(v, 4); }
  Status u64(std::uint64_t* v) { return r_.take(v, 8); }
  Status take(void* dst, std::size_t n) { return r_.take(dst, n); }
  Status skip(std::uint64_t n) { return r_.skip(n); }

  // A string's length, checked against the bytes left in the file.
  Status string_length(const char* what, std::uint64_t* len) {
    const std::uint64_t at = offset();
    POCKETLM_TRY(u64(len));
    if (*len > left())
      return Status::error(StatusCode::kBadFormat,
                           "%s: GGUF %s has a string length of %llu bytes at offset %llu, past the end of the file "
                           "(%llu bytes)",
                           name(), what, static_cast<unsigned long long>(*len), static_cast<unsigned long long>(at),
                           static_cast<unsigned long long>(s_.size()));
    return Status();
  }

  // A string into buf (cap bytes, NUL-terminated; longer strings are cut, their rest skipped).
  // A NUL among the bytes kept is an error: the C string would end there and a name such as
  // "output_norm.weight\0junk" would be taken for another.
  Status string(const char* what, char* buf, std::size_t cap, std::uint64_t* len) {
    POCKETLM_TRY(string_length(what, len));
    const std::size_t keep = *len < cap - 1 ? static_cast<std::size_t>(*len) : cap - 1;
    POCKETLM_TRY(take(buf, keep));
    buf[keep] = '\0';
    if (const void* nul = std::memchr(buf, 0, keep)) {
      sanitize(buf);  // the part before the NUL, printable
      return Status::error(StatusCode::kBadFormat,
                           "%s: GGUF %s '%s' has a NUL byte at byte %zu of its %llu: GGUF strings hold no NUL", name(),
                           what, buf, static_cast<std::size_t>(static_cast<const char*>(nul) - buf),
                           static_cast<unsigned long long>(*len));
    }
    return skip(*len - keep);
  }

 private:
  Storage& s_;
  ChunkReader r_;
};

// "<file>: GGUF key <key> <what>" (a bad-format error).
Status bad(const Parser& p, const char* key, const char* what);
// An array header: element type and count, the elements checked to fit the file.
Status array_header(Parser& p, const char* key, std::uint32_t* type, std::uint64_t* count);
// Skips a value of `type` (arrays of arrays up to two levels deep).
Status skip_value(Parser& p, const char* key, std::uint32_t type, int depth);
// An integer of any width into *out; values beyond INT64_MAX are refused.
Status read_int(Parser& p, const char* key, std::uint32_t type, long long* out);
// An f32 (or an f64, rounded to float).
Status read_float(Parser& p, const char* key, std::uint32_t type, float* out);
// A string of at most cap - 1 bytes kept (the rest skipped), NUL-terminated and sanitized.
Status read_short_string(Parser& p, const char* key, std::uint32_t type, char* out, std::size_t cap);
// The 24-byte header: magic, version 3, the tensor and key-value counts, each checked to fit.
Status read_header(Parser& p, std::uint64_t* tensor_count, std::uint64_t* kv_count);

}  // namespace gguf
}  // namespace pocketlm
