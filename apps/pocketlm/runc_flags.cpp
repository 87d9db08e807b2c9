#include "runc_flags.h"

#include <cctype>
#include <cerrno>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace pocketlm::cli {

namespace {

// text[0, end) without the white space strtol/strtod skip first.
std::string taken(const std::string& text, const char* end) {
  std::size_t begin = 0;
  const std::size_t stop = static_cast<std::size_t>(end - text.c_str());
  while (begin < stop && std::isspace(static_cast<unsigned char>(text[begin]))) ++begin;
  return text.substr(begin, stop - begin);
}

}  // namespace

AtoiResult runc_atoi(const std::string& text) {
  AtoiResult r;
  const char* s = text.c_str();
  char* end = nullptr;
  errno = 0;
  r.wide = std::strtoll(s, &end, 10);  // glibc's long on a 64-bit host: the same as long long
  r.saturated = errno == ERANGE;
  r.number = end != s;
  r.whole = r.number && *end == '\0';
  r.read = taken(text, end);
  r.value = static_cast<std::int32_t>(static_cast<std::uint32_t>(r.wide));  // (int) keeps the low 32 bits
  return r;
}

AtofResult runc_atof(const std::string& text) {
  AtofResult r;
  const char* s = text.c_str();
  char* end = nullptr;
  r.wide = std::strtod(s, &end);  // ERANGE is not an error for atof: the result is ±HUGE_VAL or tiny
  r.number = end != s;
  r.whole = r.number && *end == '\0';
  r.read = taken(text, end);
  // The double-to-float conversion of the hardware (round to nearest), without the undefined
  // behaviour C++ gives a double beyond the float range: from FLT_MAX + half an ulp it is
  // infinite (a tie rounds to even, away from FLT_MAX, whose last mantissa bit is 1).
  if (std::isfinite(r.wide) && std::fabs(r.wide) >= static_cast<double>(FLT_MAX) + 0x1p103)
    r.value = std::copysign(INFINITY, static_cast<float>(r.wide > 0 ? 1 : -1));
  else
    r.value = static_cast<float>(r.wide);
  return r;
}

namespace {

// The shortest decimal that reads back as `v`: 0.9f prints "0.9", not 0.899999976.
std::string float_text(float v) {
  char buf[32];
  for (int digits = 1; digits <= 9; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, static_cast<double>(v));
    if (std::strtof(buf, nullptr) == v) break;
  }
  return buf;
}

void add(std::string* clauses, const std::string& clause) {
  if (!clauses->empty()) *clauses += "; ";
  *clauses += clause;
}

// How atoi read `text`; empty when it is a plain decimal integer that fits an int.
std::string atoi_clauses(const std::string& text, const AtoiResult& r) {
  std::string c;
  if (!r.number) {
    add(&c, "'" + text + "' is not a number: atoi reads 0");
    return c;
  }
  if (!r.whole) add(&c, "'" + text + "' is read as " + r.read + ", the number it starts with");
  if (r.saturated)
    add(&c, r.read + " is beyond a 64-bit long: strtol returns " + (r.wide > 0 ? "LONG_MAX, " : "LONG_MIN, ") +
                std::to_string(r.wide));
  if (r.wide != r.value)
    add(&c, std::to_string(r.wide) + " does not fit a C int: atoi keeps its low 32 bits, " + std::to_string(r.value));
  return c;
}

std::string atof_clauses(const std::string& text, const AtofResult& r) {
  std::string c;
  if (!r.number) {
    add(&c, "'" + text + "' is not a number: atof reads 0");
  } else if (!r.whole) {
    add(&c, "'" + text + "' is read as " + r.read + ", the number it starts with");
  }
  return c;
}

// What run.c's sampler does with a top-p value: clamp it (outside [0, 1]), plain
// multinomial sampling (0 or 1) or nucleus sampling.
enum class ToppUse { kClamped, kOff, kOn };
ToppUse topp_use(double p) {
  if (p < 0.0 || p > 1.0) return ToppUse::kClamped;
  return p <= 0.0 || p >= 1.0 ? ToppUse::kOff : ToppUse::kOn;
}

}  // namespace

void runc_seed(const char* flag, const std::string& text, std::uint64_t clock_seed, std::uint64_t* seed,
               std::string* warning) {
  const AtoiResult r = runc_atoi(text);
  // run.c: `unsigned long long rng_seed = atoi(...)`: a negative int wraps modulo 2^64.
  const std::uint64_t stored = static_cast<std::uint64_t>(static_cast<std::int64_t>(r.value));
  std::string c = atoi_clauses(text, r);
  if (r.value < 0)
    add(&c, std::to_string(r.value) + " is negative: run.c stores it in an unsigned 64-bit seed");
  const bool clock = stored == 0;
  *seed = clock ? clock_seed : stored;
  warning->clear();
  if (c.empty()) return;  // a plain integer in [0, 2^31 - 1]: no surprise (0 is documented as the clock)
  if (clock) add(&c, "0 means the clock");
  *warning = std::string(flag) + ": " + c + "; using seed " + std::to_string(*seed) + (clock ? " (the clock)" : "") +
             ", as llama2.c does";
}

Status runc_temperature(const char* flag, const std::string& text, float* out, std::string* warning) {
  const AtofResult r = runc_atof(text);
  // Undefined in run.c: NaN logits, or a division that overflows every logit to infinity.
  if (std::isnan(r.value) || (std::isinf(r.value) && std::isinf(r.wide) && r.value > 0))
    return Status::error(StatusCode::kInvalidArgument, "%s: '%s' is not a finite number", flag, text.c_str());
  if (r.value > 0 && std::isinf(r.value))
    return Status::error(StatusCode::kInvalidArgument, "%s: '%s' is outside the range of a float (it would be infinite)",
                         flag, text.c_str());
  std::string c = atof_clauses(text, r);
  float t = r.value;
  if (t > 0.0f && t < FLT_MIN) {
    // run.c would divide the logits by it into infinities and NaN; the T -> 0 limit is greedy.
    add(&c, "temperature " + float_text(t) + " is subnormal: logits / T overflows float, so every token is sampled "
            "as the T -> 0 limit, greedily (the tokens of -t 0)");
  } else if (t < 0.0f) {
    add(&c, "temperature " + float_text(t) + " is negative: llama2.c makes it 0");
    t = 0.0f;
  } else if (t == 0.0f && r.wide != 0.0) {
    add(&c, r.read + " is 0 as a float (llama2.c's type)");
  }
  *out = t;
  warning->clear();
  if (!c.empty())
    *warning = std::string(flag) + ": " + c + "; using " + float_text(t) + (t == 0.0f ? " (greedy)" : "") +
               (t > 0.0f && t < FLT_MIN ? "" : ", as llama2.c does");
  return Status();
}

Status runc_topp(const char* flag, const std::string& text, float* out, std::string* warning) {
  const AtofResult r = runc_atof(text);
  if (std::isnan(r.value))  // run.c would keep NaN and index its top-p scratch at -1
    return Status::error(StatusCode::kInvalidArgument, "%s: '%s' is not a finite number", flag, text.c_str());
  std::string c = atof_clauses(text, r);
  float p = r.value;
  const ToppUse use = topp_use(p);
  if (use == ToppUse::kClamped) {
    add(&c, "top-p " + (r.whole ? text : float_text(p)) + " is outside [0, 1]: llama2.c makes it 0.9");
    p = 0.9f;
  } else if (use != topp_use(r.wide)) {
    add(&c, r.read + " is " + float_text(p) + " as a float (llama2.c's type)");
  }
  *out = p;
  warning->clear();
  if (!c.empty())
    *warning = std::string(flag) + ": " + c + "; using " + float_text(p) +
               (topp_use(p) == ToppUse::kOff ? " (top-p off: plain multinomial sampling)" : "") + ", as llama2.c does";
  return Status();
}

void runc_steps(const char* flag, const std::string& text, int* steps, std::string* note) {
  const AtoiResult r = runc_atoi(text);
  std::string c = atoi_clauses(text, r);
  int n = r.value;
  if (n < 0) {
    add(&c, std::to_string(n) + " is negative: llama2.c makes it 0");
    n = 0;
  }
  *steps = n;
  note->clear();
  if (!c.empty()) *note = std::string(flag) + ": " + c + (n == 0 ? ", which means seq_len" : "");
}

}  // namespace pocketlm::cli
