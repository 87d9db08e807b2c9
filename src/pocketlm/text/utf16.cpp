#include "pocketlm/text/utf16.h"

#include <cstdint>

namespace pocketlm {

Status utf16le_to_utf8(const unsigned char* in, std::size_t in_bytes, char* out, std::size_t out_capacity,
                       std::size_t* out_bytes) {
  *out_bytes = 0;
  if (in_bytes % 2 != 0)
    return Status::error(StatusCode::kInvalidArgument,
                         "utf-16: %zu bytes is not a whole number of 2-byte code units (odd trailing byte)",
                         in_bytes);
  const std::size_t units = in_bytes / 2;
  std::size_t used = 0;
  std::size_t i = 0;
  while (i < units) {
    const std::size_t at = i;
    std::uint32_t cp = static_cast<std::uint32_t>(in[2 * i]) | static_cast<std::uint32_t>(in[2 * i + 1]) << 8;
    ++i;
    if (cp >= 0xD800 && cp <= 0xDBFF && i < units) {
      const std::uint32_t lo =
          static_cast<std::uint32_t>(in[2 * i]) | static_cast<std::uint32_t>(in[2 * i + 1]) << 8;
      if (lo >= 0xDC00 && lo <= 0xDFFF) {
        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        ++i;
      }
    }
    if (cp >= 0xD800 && cp <= 0xDFFF) cp = 0xFFFD;  // unpaired surrogate
    unsigned char buf[4];
    std::size_t n;
    if (cp < 0x80) {
      buf[0] = static_cast<unsigned char>(cp);
      n = 1;
    } else if (cp < 0x800) {
      buf[0] = static_cast<unsigned char>(0xC0 | cp >> 6);
      buf[1] = static_cast<unsigned char>(0x80 | (cp & 0x3F));
      n = 2;
    } else if (cp < 0x10000) {
      buf[0] = static_cast<unsigned char>(0xE0 | cp >> 12);
      buf[1] = static_cast<unsigned char>(0x80 | (cp >> 6 & 0x3F));
      buf[2] = static_cast<unsigned char>(0x80 | (cp & 0x3F));
      n = 3;
    } else {
      buf[0] = static_cast<unsigned char>(0xF0 | cp >> 18);
      buf[1] = static_cast<unsigned char>(0x80 | (cp >> 12 & 0x3F));
      buf[2] = static_cast<unsigned char>(0x80 | (cp >> 6 & 0x3F));
      buf[3] = static_cast<unsigned char>(0x80 | (cp & 0x3F));
      n = 4;
    }
    if (n > out_capacity - used) {
      *out_bytes = used;
      return Status::error(StatusCode::kInvalidArgument,
                           "utf-16: output buffer of %zu bytes is too small (code unit %zu needs %zu more)",
                           out_capacity, at, n);
    }
    for (std::size_t k = 0; k < n; ++k) out[used + k] = static_cast<char>(buf[k]);
    used += n;
  }
  *out_bytes = used;
  return Status();
}

}  // namespace pocketlm
