// run.c's reading of -s, -t, -p and -n, reproduced exactly: it uses atoi and atof, so a flag
// value is whatever number its text starts with (0 when none), a seed is a C int stored in
// an unsigned 64-bit variable, and a float flag is parsed as a double and then narrowed.
// Each reader returns the value run.c would use and, when that value is likely to surprise
// (the text was not a plain number, or it changed on the way), a warning saying which value
// is used. Values for which run.c's behaviour is undefined (a NaN temperature or top-p, an
// infinite temperature) are errors; a subnormal one is the T -> 0 limit (greedy) with a warning.
#pragma once

#include <cstdint>
#include <string>

#include "pocketlm/base/status.h"

namespace pocketlm::cli {

// glibc's atoi on a 64-bit host: strtol (64-bit long, saturating at its limits) narrowed to
// int, i.e. the low 32 bits, sign-extended. The same on every host, so that a 32-bit build
// reads a flag as the 64-bit reference does.
struct AtoiResult {
  int value = 0;
  long long wide = 0;   // what strtol returned, before the narrowing to int
  bool number = false;  // the text starts with a number (after leading white space)
  bool whole = false;   // ... and nothing follows it
  bool saturated = false;  // strtol overflowed and returned LONG_MIN or LONG_MAX
  std::string read;        // the characters strtol took, without leading white space
};
AtoiResult runc_atoi(const std::string& text);

// atof: strtod, then run.c assigns it to a float.
struct AtofResult {
  double wide = 0.0;
  float value = 0.0f;
  bool number = false;
  bool whole = false;
  std::string read;  // the characters strtod took, without leading white space
};
AtofResult runc_atof(const std::string& text);

// -s: run.c's `rng_seed = atoi(text)` into an unsigned long long, where 0 means the clock:
// *seed is the seed used, `clock_seed` in that case. *warning is set (else cleared) when the
// seed differs from the text read as a decimal integer, saying which seed is used.
void runc_seed(const char* flag, const std::string& text, std::uint64_t clock_seed, std::uint64_t* seed,
               std::string* warning);

// -t: atof narrowed to float; negative becomes 0 (greedy).
Status runc_temperature(const char* flag, const std::string& text, float* out, std::string* warning);
// -p: atof narrowed to float; outside [0, 1] becomes 0.9; 0 or 1 turns top-p off.
Status runc_topp(const char* flag, const std::string& text, float* out, std::string* warning);

// -n: atoi; negative becomes 0, which (like 0 itself) means seq_len: *steps is then 0. The
// caller clamps to seq_len and adds the final value to *note, a warning without its value,
// e.g. "-n: -5 is negative; llama2.c makes it 0, i.e. seq_len" (empty when unsurprising).
void runc_steps(const char* flag, const std::string& text, int* steps, std::string* note);

}  // namespace pocketlm::cli
