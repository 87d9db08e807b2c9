// format_to: the engine's own printf-style formatting into a fixed buffer. The core never
// calls the C library's printf family: newlib-nano (Cortex-M, ESP-IDF's small builds) prints
// nothing for %llu and %f unless the firmware opts in, and a PSP homebrew libc may differ
// again. One formatter for every target keeps messages and plan tables identical everywhere.
//
// Supported: flags '-' and '0', width and precision (numbers or '*'), length modifiers hh h l
// ll z j t, conversions d i u x X c s p f and %%. %f prints fixed-point with round-half-even
// of the exact decimal expansion only up to 1e15 (beyond that it prints the value in %e-like
// form "1.23e+20"), which covers every number the engine prints (percentages, MiB, tok/s).
#pragma once

#include <cstdarg>
#include <cstddef>

namespace pocketlm {

// Writes at most cap - 1 characters and a NUL (cap > 0); returns the characters the whole
// result needs (like snprintf), so a return >= cap means the text was cut.
std::size_t format_to(char* buf, std::size_t cap, const char* fmt, ...) __attribute__((format(printf, 3, 4)));
std::size_t vformat_to(char* buf, std::size_t cap, const char* fmt, va_list args);

// "s" unless n is 1, for a count in a message: "%d layer%s" gives "1 layer", "5 layers".
constexpr const char* plural_s(long long n) { return n == 1 ? "" : "s"; }

}  // namespace pocketlm
