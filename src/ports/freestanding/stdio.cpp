// snprintf and vsnprintf over the engine's own formatter (base/format.h: d i u x X c s p f and
// %%, with flags, widths, precisions and length modifiers), the only printf the engine's code
// calls (format/file_kind.cpp's messages): a board without a C library needs no other.
#include <cstdarg>
#include <cstddef>

#include "pocketlm/base/format.h"

extern "C" {

int vsnprintf(char *buf, std::size_t cap, const char *fmt, va_list args) {
  if (cap == 0) {
    char none[1];
    return static_cast<int>(pocketlm::vformat_to(none, 1, fmt, args));
  }
  return static_cast<int>(pocketlm::vformat_to(buf, cap, fmt, args));
}

int snprintf(char *buf, std::size_t cap, const char *fmt, ...) {
  va_list args;
  va_start(args, fmt);
  const int n = vsnprintf(buf, cap, fmt, args);
  va_end(args);
  return n;
}

}  // extern "C"
