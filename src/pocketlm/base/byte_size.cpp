#include "pocketlm/base/byte_size.h"

#include "pocketlm/base/format.h"
#include <cstring>

namespace pocketlm {

namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

bool equals_ignore_case(const char* a, const char* b) {
  for (; *a && *b; ++a, ++b) {
    char x = (*a >= 'a' && *a <= 'z') ? static_cast<char>(*a - 32) : *a;
    char y = (*b >= 'a' && *b <= 'z') ? static_cast<char>(*b - 32) : *b;
    if (x != y) return false;
  }
  return *a == *b;
}

// Returns the multiplier for a suffix ("" = 1), or 0 when unknown.
std::uint64_t suffix_multiplier(const char* s) {
  static const struct { const char* names[3]; std::uint64_t mult; } kTable[] = {
      {{"", "B", nullptr}, 1},
      {{"K", "KB", "KiB"}, 1ull << 10},
      {{"M", "MB", "MiB"}, 1ull << 20},
      {{"G", "GB", "GiB"}, 1ull << 30},
  };
  for (const auto& row : kTable)
    for (const char* name : row.names)
      if (name && equals_ignore_case(s, name)) return row.mult;
  return 0;
}

}  // namespace

Status parse_byte_size(const char* what, const char* text, std::uint64_t* bytes) {
  const char* p = text;
  if (!p || !*p) return Status::error(StatusCode::kInvalidArgument, "%s: empty byte size", what);
  // Integer part, then an optional fraction, both as an exact rational num/den.
  std::uint64_t num = 0, den = 1;
  bool any_digit = false;
  for (; is_digit(*p); ++p) {
    any_digit = true;
    if (num > (UINT64_MAX - 9) / 10)
      return Status::error(StatusCode::kInvalidArgument, "%s: byte size '%s' is too large", what, text);
    num = num * 10 + static_cast<std::uint64_t>(*p - '0');
  }
  if (*p == '.') {
    for (++p; is_digit(*p); ++p) {
      any_digit = true;
      if (den >= 1000000000ull || num > (UINT64_MAX - 9) / 10)
        return Status::error(StatusCode::kInvalidArgument, "%s: byte size '%s' has too many digits", what, text);
      num = num * 10 + static_cast<std::uint64_t>(*p - '0');
      den *= 10;
    }
  }
  if (!any_digit)
    return Status::error(StatusCode::kInvalidArgument,
                         "%s: '%s' is not a byte size (expected e.g. 25165824, 24M or 24MiB)", what, text);
  std::uint64_t mult = suffix_multiplier(p);
  if (mult == 0)
    return Status::error(StatusCode::kInvalidArgument,
                         "%s: unknown unit '%s' in '%s' (use B, K, M, G, KiB, MiB or GiB)", what, p, text);
  std::uint64_t scaled = 0;
  if (__builtin_mul_overflow(num, mult, &scaled) || scaled / den > (1ull << 63))
    return Status::error(StatusCode::kInvalidArgument, "%s: byte size '%s' is too large", what, text);
  if (scaled % den != 0)
    return Status::error(StatusCode::kInvalidArgument, "%s: byte size '%s' is not a whole number of bytes",
                         what, text);
  if (scaled == 0)
    return Status::error(StatusCode::kInvalidArgument, "%s: byte size '%s' must be positive", what, text);
  *bytes = scaled / den;
  return Status();
}

void format_byte_size(std::uint64_t bytes, char* buf, std::size_t buf_size) {
  static const char* const kUnits[] = {"KiB", "MiB", "GiB", "TiB"};
  if (bytes < 1024) {
    format_to(buf, buf_size, "%llu B", static_cast<unsigned long long>(bytes));
    return;
  }
  double v = static_cast<double>(bytes) / 1024.0;
  int unit = 0;
  while (v >= 1024.0 && unit < 3) {
    v /= 1024.0;
    ++unit;
  }
  format_to(buf, buf_size, "%.2f %s", v, kUnits[unit]);
}

}  // namespace pocketlm
