// Overflow-checked size arithmetic. Header fields are hostile input: every byte count
// derived from them goes through these helpers, which report overflow instead of wrapping.
#pragma once

#include <cstddef>
#include <cstdint>

namespace pocketlm {

// The engine's dimensions and counts are int; every target it supports has a 32-bit int.
static_assert(sizeof(int) == 4, "pocketlm assumes a 32-bit int");

// *out = a * b; returns false (and leaves *out unspecified) on 64-bit overflow.
inline bool checked_mul(std::uint64_t a, std::uint64_t b, std::uint64_t* out) {
  return !__builtin_mul_overflow(a, b, out);
}

// *out = a + b; returns false on 64-bit overflow.
inline bool checked_add(std::uint64_t a, std::uint64_t b, std::uint64_t* out) {
  return !__builtin_add_overflow(a, b, out);
}

// Product of several factors; false if any step overflows.
inline bool checked_product(std::uint64_t* out, std::uint64_t a, std::uint64_t b,
                            std::uint64_t c = 1, std::uint64_t d = 1) {
  std::uint64_t r = 0;
  return checked_mul(a, b, &r) && checked_mul(r, c, &r) && checked_mul(r, d, out);
}

// Rounds n up to a multiple of `align` (a power of two); false on overflow.
inline bool checked_align_up(std::uint64_t n, std::uint64_t align, std::uint64_t* out) {
  std::uint64_t r = 0;
  if (!checked_add(n, align - 1, &r)) return false;
  *out = r & ~(align - 1);
  return true;
}

// True when n fits the host's size_t (matters on 32-bit MIPS and Xtensa).
inline bool fits_size_t(std::uint64_t n) {
  return n <= static_cast<std::uint64_t>(static_cast<std::size_t>(-1));
}

}  // namespace pocketlm
