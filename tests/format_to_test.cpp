// The engine's own formatter (base/format.h) against the C library's snprintf on the
// conversions the engine uses: the same text on a host, and therefore on newlib-nano targets
// whose printf would print nothing for %llu or %f.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <string>

#include "pocketlm/base/format.h"

namespace pocketlm {
namespace {

template <typename... Args>
void expect_like_snprintf(const char* fmt, Args... args) {
  char want[256], got[256];
  std::snprintf(want, sizeof want, fmt, args...);
  const std::size_t n = format_to(got, sizeof got, fmt, args...);
  EXPECT_STREQ(got, want) << "format: " << fmt;
  EXPECT_EQ(n, std::string(want).size()) << "format: " << fmt;
}

TEST(FormatTo, IntegersAsPrintfPrintsThem) {
  expect_like_snprintf("%d %i %d", 0, -17, 2147483647);
  expect_like_snprintf("%d", -2147483647 - 1);
  expect_like_snprintf("%u %x %X %08x", 4000000000u, 0xbeefu, 0xbeefu, 0x616b3432u);
  expect_like_snprintf("%llu %lld", 18446744073709551615ull, -9223372036854775807ll - 1);
  expect_like_snprintf("%zu %ld %lu", static_cast<std::size_t>(65536), -5L, 7UL);
  expect_like_snprintf("%12llu|%-12llu|%012d", 21769600ull, 42ull, -42);
  expect_like_snprintf("%02X %.3d %5.0d|", 0x7u, 5, 0);
}

TEST(FormatTo, StringsCharsAndPercent) {
  expect_like_snprintf("%s: %c%c%c%c 100%%", "model.bin", 'G', 'G', 'U', 'F');
  expect_like_snprintf("%-22s | %10s | %.3s", "kv cache", "3.38 MiB", "abcdef");
  expect_like_snprintf("%.22s-+-%.12s", "------------------------------", "------------------------------");
  expect_like_snprintf("%*d|%-*d|%.*s", 6, 42, 6, 42, 2, "xyz");
}

TEST(FormatTo, FixedPointAsTheEnginePrintsIt) {
  expect_like_snprintf("%.2f %.1f %5.1f%%", 9.89, 41.2, 0.0);
  expect_like_snprintf("%.2f %.2f %.2f", 1023.999, 0.005, 24.0);
  expect_like_snprintf("%f %.0f %.3f", 3.14159265, 2.5, -0.0005);
  expect_like_snprintf("%8.2f|%-8.2f|", 17.25, -3.5);
  char buf[32];
  format_to(buf, sizeof buf, "%f %f", 1.0 / 0.0, -1.0 / 0.0);
  EXPECT_STREQ(buf, "inf -inf");
  format_to(buf, sizeof buf, "%.2f", 0.0 / 0.0);
  EXPECT_STREQ(buf, "nan");
  format_to(buf, sizeof buf, "%.2f", 1.5e20);  // past the exact path: three significant digits
  EXPECT_STREQ(buf, "1.50e+20");
  // Below 1e15 but with 10^precision past a uint64 (the fuzzer's %f of 1.8e14): the same form.
  format_to(buf, sizeof buf, "%f", 1.8e14);
  EXPECT_STREQ(buf, "1.80e+14");
  format_to(buf, sizeof buf, "%.9f", -2.5e10);
  EXPECT_STREQ(buf, "-2.50e+10");
  expect_like_snprintf("%f %.9f", 9.1e12, 9.1e9);  // the largest that stay exact
}

TEST(FormatTo, CutsAtTheBufferAndReportsTheFullLength) {
  char buf[8];
  EXPECT_EQ(format_to(buf, sizeof buf, "%s=%llu", "kv cache", 3538944ull), 16u);
  EXPECT_STREQ(buf, "kv cach");
  char one[1];
  EXPECT_EQ(format_to(one, sizeof one, "%d", 12345), 5u);
  EXPECT_STREQ(one, "");
}

}  // namespace
}  // namespace pocketlm
