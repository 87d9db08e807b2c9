// UTF-16LE → UTF-8 (text from the PSP's on-screen keyboard): BMP and astral characters,
// unpaired surrogates as U+FFFD, an odd byte count and a short output buffer as errors; and an
// OSK script that is a UTF-8 text file refused.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "pocketlm/text/osk_script.h"
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

Status osk_init(const std::vector<unsigned char>& bytes, int* count = nullptr) {
  OskScript script;
  const Status st = script.init(bytes.data(), bytes.size(), "osk");
  if (count) *count = script.count();
  return st;
}

std::vector<unsigned char> bytes_of(const std::string& s) { return {s.begin(), s.end()}; }

// A text file given as an OSK script would be drawn as CJK: its byte pairs read as UTF-16LE
// ("He" is U+6548). UTF-8 (ASCII among it) with no NUL byte is refused, naming what it is.
TEST(OskScript, Utf8TextIsRefused) {
  for (const std::string& text : {std::string("Hello there\nHow are you?\n"), std::string("Hi"),
                                  std::string("\xEF\xBB\xBF" "caf\xC3\xA9 \xE3\x81\xAD\xE3\x81\x93\n")}) {
    const Status st = osk_init(bytes_of(text));
    EXPECT_EQ(st.code(), StatusCode::kBadFormat) << text;
    EXPECT_NE(std::string(st.message()).find("osk: looks like UTF-8 text (" + std::to_string(text.size()) + " bytes"),
              std::string::npos)
        << st.message();
    EXPECT_NE(std::string(st.message()).find("expected UTF-16LE strings, each ended by U+0000"), std::string::npos);
  }
}

TEST(OskScript, Utf16LeScriptsAreNotMistakenForText) {
  int count = 0;
  // ASCII in UTF-16LE has a NUL in every other byte, terminated or not.
  EXPECT_TRUE(osk_init(le({'H', 'i', 0, 'Y', 'o'}), &count).ok());
  EXPECT_EQ(count, 2);
  EXPECT_TRUE(osk_init(le({0xFEFF, 'H', 'i'}), &count).ok());
  // U+732B U+8C93 (no byte 00): 2B 73 93 8C is not UTF-8 (a stray continuation byte).
  EXPECT_TRUE(osk_init(le({0x732B, 0x8C93}), &count).ok());
  // U+732B alone is the bytes "+s": a one-string script may end with its U+0000 to be read as one.
  EXPECT_EQ(osk_init(le({0x732B})).code(), StatusCode::kBadFormat);
  EXPECT_TRUE(osk_init(le({0x732B, 0}), &count).ok());
  EXPECT_EQ(count, 1);
}

}  // namespace
}  // namespace pocketlm
