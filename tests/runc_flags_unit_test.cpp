// The CLI's atoi/atof emulation (apps/pocketlm/runc_flags.h) against the C library's own
// atoi and atof: on a 64-bit glibc host they are the functions run.c calls. A 32-bit host's
// atoi saturates at its 32-bit long instead, so there the cases are checked against the
// values run.c gets on the 64-bit reference host, written out.
#include <gtest/gtest.h>

#include <cfloat>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <string>

#include "runc_flags.h"

namespace pocketlm::cli {
namespace {

const char* const kIntTexts[] = {
    "0", "42", "-5", "+7", "  13", "\t-8", "12abc", "1.5", "abc", "", " ", "-", "0x10", "2147483647", "2147483648",
    "-2147483648", "-2147483649", "4294967295", "4294967296", "4294967301", "9223372036854775807",
    "9223372036854775808", "18446744073709551611", "-9223372036854775809", "99999999999999999999999",
};

TEST(RuncAtoi, MatchesTheCLibrarysAtoi) {
  if (sizeof(long) != 8) GTEST_SKIP() << "this host's atoi reads a 32-bit long; run.c's reference host is 64-bit";
  for (const char* text : kIntTexts) EXPECT_EQ(runc_atoi(text).value, std::atoi(text)) << "'" << text << "'";
}

TEST(RuncAtoi, SixtyFourBitHostValuesOnEveryHost) {
  EXPECT_EQ(runc_atoi("4294967301").value, 5);
  EXPECT_EQ(runc_atoi("2147483648").value, INT_MIN);
  EXPECT_EQ(runc_atoi("18446744073709551611").value, -1);  // LONG_MAX's low 32 bits
  EXPECT_TRUE(runc_atoi("18446744073709551611").saturated);
  EXPECT_EQ(runc_atoi("-9223372036854775809").value, 0);  // LONG_MIN's low 32 bits
  EXPECT_EQ(runc_atoi(" 12abc").read, "12");
  EXPECT_FALSE(runc_atoi(" 12abc").whole);
  EXPECT_FALSE(runc_atoi("abc").number);
}

const char* const kFloatTexts[] = {
    "1", "0.9", "0.99999997019767761", "0.99999994", "1.00000001", "-1", "1e-50", "-1e-50", "1e-45", "1e-40",
    "1e50", "-1e50", "inf", "-inf", "nan", "abc", "0.8x", " 0.5", "0x1p-2",
    "3.4028234663852886e38",  // FLT_MAX
    "3.4028235677973362e38",  // just below FLT_MAX + half an ulp: rounds to FLT_MAX
    "3.4028235677973366e38",  // FLT_MAX + half an ulp: a tie, rounds to even (infinity)
};

TEST(RuncAtof, MatchesTheCLibrarysAtofNarrowedToFloat) {
  for (const char* text : kFloatTexts) {
    const double wide = std::atof(text);
    const AtofResult r = runc_atof(text);
    EXPECT_EQ(std::isnan(r.wide), std::isnan(wide)) << text;
    if (std::isnan(wide)) continue;
    EXPECT_EQ(r.wide, wide) << text;
    if (std::fabs(wide) > 3.5e38) {  // beyond the float range (C++ leaves that cast undefined)
      EXPECT_EQ(r.value, std::copysign(INFINITY, static_cast<float>(wide > 0 ? 1 : -1))) << text;
      continue;
    }
    // volatile: the conversion the hardware does at run time, as in run.c.
    volatile double v = wide;
    const float narrowed = static_cast<float>(v);
    EXPECT_EQ(r.value, narrowed) << text;
  }
  EXPECT_EQ(runc_atof("3.4028235677973362e38").value, FLT_MAX);
  EXPECT_TRUE(std::isinf(runc_atof("3.4028235677973366e38").value));
}

}  // namespace
}  // namespace pocketlm::cli
