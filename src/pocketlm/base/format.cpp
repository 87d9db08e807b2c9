#include "pocketlm/base/format.h"

#include <cmath>
#include <cstdint>

namespace pocketlm {

namespace {

// Appends to a bounded buffer while counting everything that would have been written.
struct Out {
  char* buf;
  std::size_t cap;
  std::size_t n = 0;
  void put(char c) {
    if (n + 1 < cap) buf[n] = c;
    ++n;
  }
  void repeat(char c, int count) {
    for (int i = 0; i < count; ++i) put(c);
  }
};

struct Spec {
  bool left = false, zero = false;
  int width = 0;
  int precision = -1;
};

// Writes body[0..len) with a sign/prefix, padded to the spec's width.
void emit(Out& o, const Spec& s, const char* prefix, const char* body, int len, bool numeric) {
  int prefix_len = 0;
  while (prefix[prefix_len]) ++prefix_len;
  const int pad = s.width > len + prefix_len ? s.width - len - prefix_len : 0;
  if (!s.left && !(s.zero && numeric)) o.repeat(' ', pad);
  for (int i = 0; i < prefix_len; ++i) o.put(prefix[i]);
  if (!s.left && s.zero && numeric) o.repeat('0', pad);
  for (int i = 0; i < len; ++i) o.put(body[i]);
  if (s.left) o.repeat(' ', pad);
}

// Digits of v in `base` into the end of tmp[32]; returns the start.
char* digits(std::uint64_t v, unsigned base, bool upper, char* end) {
  const char* set = upper ? "0123456789ABCDEF" : "0123456789abcdef";
  char* p = end;
  do {
    *--p = set[v % base];
    v /= base;
  } while (v);
  return p;
}

void emit_integer(Out& o, const Spec& s, bool negative, std::uint64_t magnitude, unsigned base, bool upper,
                  const char* extra_prefix) {
  char tmp[72];
  char* end = tmp + sizeof tmp;
  char* p = digits(magnitude, base, upper, end);
  if (s.precision == 0 && magnitude == 0) p = end;
  while (s.precision > end - p && p > tmp) *--p = '0';
  const char* prefix = negative ? "-" : extra_prefix;
  Spec spec = s;
  if (s.precision >= 0) spec.zero = false;  // C: a precision turns the 0 flag off
  emit(o, spec, prefix, p, static_cast<int>(end - p), true);
}

void emit_fixed(Out& o, const Spec& s, double v) {
  const int prec = s.precision < 0 ? 6 : (s.precision > 9 ? 9 : s.precision);
  const char* sign = v < 0 || (v == 0 && 1.0 / v < 0) ? "-" : "";
  double a = v < 0 ? -v : v;
  if (a != a) return emit(o, s, "", "nan", 3, false);
  if (__builtin_isinf(a)) return emit(o, s, sign, "inf", 3, false);
  char tmp[64];
  int len = 0;
  std::uint64_t scale = 1;
  for (int i = 0; i < prec; ++i) scale *= 10;
  // The exact integer path below needs a * 10^prec (and one more for the rounding) in a uint64.
  if (a >= 1e15 || a * static_cast<double>(scale) >= 9.2e18) {
    // Too large for the exact integer path: mantissa and exponent, three significant digits.
    int exp10 = 0;
    while (a >= 10.0) {
      a /= 10.0;
      ++exp10;
    }
    const auto m = static_cast<std::uint64_t>(a * 100.0 + 0.5);
    tmp[len++] = static_cast<char>('0' + m / 100);
    tmp[len++] = '.';
    tmp[len++] = static_cast<char>('0' + m / 10 % 10);
    tmp[len++] = static_cast<char>('0' + m % 10);
    tmp[len++] = 'e';
    tmp[len++] = '+';
    char e[8];
    char* ep = digits(static_cast<std::uint64_t>(exp10), 10, false, e + sizeof e);
    while (ep < e + sizeof e) tmp[len++] = *ep++;
    return emit(o, s, sign, tmp, len, true);
  }
  // Rounded as printf rounds the exact binary value: a fraction above or below one half of the
  // last digit decides; at exactly one half of the rounded product, the product's own rounding
  // error (exact, from a fused multiply-add) says which side the true value lies on, and only
  // a true tie goes to even.
  const double scaled = a * static_cast<double>(scale);
  auto whole = static_cast<std::uint64_t>(scaled);
  const double frac = scaled - static_cast<double>(whole);
  if (frac > 0.5) {
    ++whole;
  } else if (frac == 0.5) {
    const double error = std::fma(a, static_cast<double>(scale), -scaled);
    if (error > 0 || (error == 0 && (whole & 1))) ++whole;
  }
  char* const end = tmp + sizeof tmp;
  char* const int_end = prec > 0 ? end - prec - 1 : end;
  char* p = digits(whole / scale, 10, false, int_end);
  if (prec > 0) {
    *int_end = '.';
    std::uint64_t f = whole % scale;
    for (int i = 1; i <= prec; ++i) {
      end[-i] = static_cast<char>('0' + f % 10);
      f /= 10;
    }
  }
  emit(o, s, sign, p, static_cast<int>(end - p), true);
}

}  // namespace

std::size_t vformat_to(char* buf, std::size_t cap, const char* fmt, va_list args) {
  Out o{buf, cap};
  for (const char* f = fmt; *f; ++f) {
    if (*f != '%') {
      o.put(*f);
      continue;
    }
    ++f;
    Spec s;
    for (;; ++f) {
      if (*f == '-') s.left = true;
      else if (*f == '0') s.zero = true;
      else if (*f == '+' || *f == ' ' || *f == '#') continue;  // accepted, not used by the engine
      else break;
    }
    if (*f == '*') {
      s.width = va_arg(args, int);
      if (s.width < 0) {
        s.left = true;
        s.width = -s.width;
      }
      ++f;
    } else {
      while (*f >= '0' && *f <= '9') s.width = s.width * 10 + (*f++ - '0');
    }
    if (*f == '.') {
      ++f;
      s.precision = 0;
      if (*f == '*') {
        s.precision = va_arg(args, int);
        ++f;
      } else {
        while (*f >= '0' && *f <= '9') s.precision = s.precision * 10 + (*f++ - '0');
      }
    }
    int longs = 0;  // 0 int, 1 long, 2 long long, 3 size_t, 4 intmax_t, 5 ptrdiff_t
    if (*f == 'h') {
      ++f;
      if (*f == 'h') ++f;
    } else if (*f == 'l') {
      ++f;
      longs = 1;
      if (*f == 'l') {
        ++f;
        longs = 2;
      }
    } else if (*f == 'z') {
      ++f;
      longs = 3;
    } else if (*f == 'j') {
      ++f;
      longs = 4;
    } else if (*f == 't') {
      ++f;
      longs = 5;
    }
    switch (*f) {
      case 'd': case 'i': {
        long long v = longs == 0 ? va_arg(args, int)
                      : longs == 1 ? va_arg(args, long)
                      : longs == 2 ? va_arg(args, long long)
                      : longs == 3 ? static_cast<long long>(va_arg(args, std::size_t))
                      : longs == 4 ? static_cast<long long>(va_arg(args, std::intmax_t))
                                   : static_cast<long long>(va_arg(args, std::ptrdiff_t));
        const bool neg = v < 0;
        const std::uint64_t mag = neg ? 0 - static_cast<std::uint64_t>(v) : static_cast<std::uint64_t>(v);
        emit_integer(o, s, neg, mag, 10, false, "");
        break;
      }
      case 'u': case 'x': case 'X': {
        unsigned long long v = longs == 0 ? va_arg(args, unsigned)
                               : longs == 1 ? va_arg(args, unsigned long)
                               : longs == 2 ? va_arg(args, unsigned long long)
                               : longs == 3 ? va_arg(args, std::size_t)
                               : longs == 4 ? static_cast<unsigned long long>(va_arg(args, std::uintmax_t))
                                            : static_cast<unsigned long long>(va_arg(args, std::ptrdiff_t));
        emit_integer(o, s, false, v, *f == 'u' ? 10 : 16, *f == 'X', "");
        break;
      }
      case 'p': {
        const auto v = reinterpret_cast<std::uintptr_t>(va_arg(args, void*));
        emit_integer(o, s, false, v, 16, false, "0x");
        break;
      }
      case 'c': {
        const char c = static_cast<char>(va_arg(args, int));
        emit(o, s, "", &c, 1, false);
        break;
      }
      case 's': {
        const char* str = va_arg(args, const char*);
        if (!str) str = "(null)";
        int len = 0;
        while (str[len] && (s.precision < 0 || len < s.precision)) ++len;
        emit(o, s, "", str, len, false);
        break;
      }
      case 'f': case 'F': case 'g': case 'e':
        emit_fixed(o, s, va_arg(args, double));
        break;
      case '%':
        o.put('%');
        break;
      default:  // an unknown conversion is printed as written, so a mistake is visible
        o.put('%');
        if (*f) o.put(*f);
        else --f;
        break;
    }
  }
  if (cap > 0) buf[o.n < cap ? o.n : cap - 1] = '\0';
  return o.n;
}

std::size_t format_to(char* buf, std::size_t cap, const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  const std::size_t n = vformat_to(buf, cap, fmt, args);
  va_end(args);
  return n;
}

}  // namespace pocketlm
