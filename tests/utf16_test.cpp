// UTF-16LE → UTF-8 (text from the PSP's on-screen keyboard): BMP and astral characters,
// unpaired surrogates as U+FFFD, an odd byte count and a short output buffer as errors.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "pocketlm/text/utf16.h"

namespace pocketlm {
namespace {

std::vector<unsigned char> le(std::initializer_list<unsigned> units) {
  std::vector<unsigned char> b;
  for (unsigned u : units) {
    b.push_back(static_cast<unsigned char>(u & 0xFF));
    b.push_back(static_cast<unsigned char>(u >> 8));
  }
  return b;
}

std::string convert(const std::vector<unsigned char>& in, std::size_t capacity = 64, Status* status = nullptr) {
  std::string out(capacity, '\0');
  std::size_t n = 12345;
  const Status st = utf16le_to_utf8(in.data(), in.size(), out.data(), capacity, &n);
  if (status) *status = st;
  else EXPECT_TRUE(st.ok()) << st.message();
  EXPECT_LE(n, capacity);
  out.resize(n);
  return out;
}

const std::string kReplacement = "\xEF\xBF\xBD";

TEST(Utf16, AsciiAndBmp) {
  EXPECT_EQ(convert(le({'H', 'i', ' ', 0xE9, 0x20AC, 0x65E5})), "Hi \xC3\xA9\xE2\x82\xAC\xE6\x97\xA5");
}

TEST(Utf16, EmptyInput) { EXPECT_EQ(convert({}, 0), ""); }

TEST(Utf16, SurrogatePairIsOneCharacter) {
  EXPECT_EQ(convert(le({0xD83D, 0xDC09})), "\xF0\x9F\x90\x89");  // U+1F409
  EXPECT_EQ(convert(le({0xDBFF, 0xDFFF})), "\xF4\x8F\xBF\xBF");  // U+10FFFF
}

TEST(Utf16, UnpairedSurrogatesBecomeReplacement) {
  EXPECT_EQ(convert(le({0xD83D})), kReplacement);                    // high at the end
  EXPECT_EQ(convert(le({0xD83D, 'a'})), kReplacement + "a");        // high then not low
  EXPECT_EQ(convert(le({0xDC09, 'a'})), kReplacement + "a");        // lone low
  EXPECT_EQ(convert(le({0xD800, 0xD83D, 0xDC09})), kReplacement + "\xF0\x9F\x90\x89");
}

TEST(Utf16, NulIsKept) { EXPECT_EQ(convert(le({'a', 0, 'b'})), std::string("a\0b", 3)); }

TEST(Utf16, OddByteCountIsAnError) {
  std::vector<unsigned char> in = le({'a'});
  in.push_back('b');
  Status st;
  EXPECT_EQ(convert(in, 64, &st), "");
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(st.message()).find("odd"), std::string::npos) << st.message();
}

TEST(Utf16, OutputCapacityIsChecked) {
  Status st;
  // "a€" needs 4 bytes: with 3 only "a" fits, and no partial character is written.
  EXPECT_EQ(convert(le({'a', 0x20AC}), 3, &st), "a");
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(convert(le({'a', 0x20AC}), 4), "a\xE2\x82\xAC");
  EXPECT_EQ(convert(le({0xD83D, 0xDC09}), 3, &st), "");
  EXPECT_FALSE(st.ok());
  EXPECT_EQ(convert(le({'x'}), 0, &st), "");
  EXPECT_FALSE(st.ok());
}

}  // namespace
}  // namespace pocketlm
