// --heap style byte sizes.
#include <gtest/gtest.h>

#include <string>

#include "pocketlm/base/byte_size.h"

namespace pocketlm {
namespace {

std::uint64_t parse(const char* text) {
  std::uint64_t v = 0;
  Status st = parse_byte_size("--heap", text, &v);
  EXPECT_TRUE(st.ok()) << st.message();
  return v;
}

TEST(ByteSize, AcceptsPlainAndBinarySuffixes) {
  EXPECT_EQ(parse("25165824"), 25165824u);
  EXPECT_EQ(parse("24M"), 25165824u);
  EXPECT_EQ(parse("24MiB"), 25165824u);
  EXPECT_EQ(parse("24mb"), 25165824u);
  EXPECT_EQ(parse("512K"), 524288u);
  EXPECT_EQ(parse("1G"), 1073741824u);
  EXPECT_EQ(parse("1.5K"), 1536u);
  EXPECT_EQ(parse("100B"), 100u);
}

TEST(ByteSize, RejectsWithTheFlagAndTheValue) {
  for (const char* bad : {"", "M", "abc", "24X", "-5", "0", "0.5", "1.1B", "99999999999999999999",
                          "20000000000G"}) {
    std::uint64_t v = 0;
    Status st = parse_byte_size("--heap", bad, &v);
    EXPECT_FALSE(st.ok()) << bad;
    EXPECT_EQ(std::string(st.message()).rfind("--heap: ", 0), 0u) << st.message();
  }
}

TEST(ByteSize, FormatsHumanSizes) {
  char buf[32];
  format_byte_size(25165824, buf, sizeof buf);
  EXPECT_STREQ(buf, "24.00 MiB");
  format_byte_size(100, buf, sizeof buf);
  EXPECT_STREQ(buf, "100 B");
}

}  // namespace
}  // namespace pocketlm
