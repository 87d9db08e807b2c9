// The one line a board prints when its CPU takes a fault (an unaligned load, a trapping FP
// operation): "error: <cause> (<code>) at PC ..." (board.h). Built by hand, digit by digit: the
// engine's formatter, the C library or the stack's contents may be what failed.
#pragma once

#include <cstddef>
#include <cstdint>

namespace pocketlm::firmware {

struct FaultLine {
  char text[160];
  std::size_t length = 0;

  FaultLine& put(const char* s) {
    while (*s && length < sizeof text) text[length++] = *s++;
    return *this;
  }
  FaultLine& dec(std::uint32_t v) {
    char digits[10];
    int n = 0;
    do digits[n++] = static_cast<char>('0' + v % 10);
    while ((v /= 10) != 0);
    while (n > 0 && length < sizeof text) text[length++] = digits[--n];
    return *this;
  }
  FaultLine& hex(std::uint32_t v) {
    put("0x");
    for (int shift = 28; shift >= 0 && length < sizeof text; shift -= 4)
      text[length++] = "0123456789abcdef"[(v >> shift) & 0xF];
    return *this;
  }
};

}  // namespace pocketlm::firmware
