// One line to the host's stdout (descriptor 1, the board's semihosting) through the engine's own
// formatter, for the firmware programs: no C library printf exists on every board.
#pragma once

#include <cstdarg>
#include <cstddef>

#include <unistd.h>

#include "pocketlm/base/format.h"

namespace pocketlm::firmware {

__attribute__((format(printf, 1, 2))) inline void say(const char* fmt, ...) {
  char line[256];
  va_list args;
  va_start(args, fmt);
  std::size_t n = vformat_to(line, sizeof line - 1, fmt, args);
  va_end(args);
  if (n > sizeof line - 2) n = sizeof line - 2;  // cut to the buffer, the newline kept
  line[n] = '\n';
  ::write(1, line, n + 1);
}

}  // namespace pocketlm::firmware
