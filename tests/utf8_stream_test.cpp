// UTF-8 assembly of decoded pieces: characters split over byte tokens are joined, invalid
// sequences become U+FFFD, and run.c's rule for one-byte control pieces is kept.
#include <gtest/gtest.h>

#include <string>

#include "pocketlm/text/utf8_stream.h"

namespace pocketlm {
namespace {

struct Collect {
  std::string text;
  Utf8Stream stream{[](const char* t, std::size_t n, void* ctx) { static_cast<std::string*>(ctx)->append(t, n); },
                    &text};
  void bytes(std::initializer_list<unsigned char> b) {
    for (unsigned char c : b) stream.write_piece(&c, 1);
  }
  void piece(const std::string& s) {
    stream.write_piece(reinterpret_cast<const unsigned char*>(s.data()), s.size());
  }
};

const std::string kReplacement = "\xEF\xBF\xBD";

TEST(Utf8Stream, JoinsACharacterSpelledWithByteTokens) {
  Collect c;
  c.bytes({0xF0, 0x9F});
  EXPECT_EQ(c.text, "");  // held until complete
  c.bytes({0x90, 0x89});
  EXPECT_EQ(c.text, "\xF0\x9F\x90\x89");
  c.bytes({0xC3, 0xAB});
  EXPECT_EQ(c.text, "\xF0\x9F\x90\x89\xC3\xAB");
}

TEST(Utf8Stream, PassesTextPieces) {
  Collect c;
  c.piece(" Once");
  c.piece(" Zo\xC3\xAB");
  EXPECT_EQ(c.text, " Once Zo\xC3\xAB");
}

TEST(Utf8Stream, DropsOneByteControlPiecesLikeRunC) {
  Collect c;
  c.bytes({0x01, 'a', 0x7F, '\n', '\t'});
  EXPECT_EQ(c.text, "a\n\t");
}

TEST(Utf8Stream, ReplacesAnInterruptedCharacter) {
  Collect c;
  c.bytes({0xE2, 0x82});
  c.piece("x");
  EXPECT_EQ(c.text, kReplacement + "x");
}

TEST(Utf8Stream, ReplacesStrayAndForbiddenBytes) {
  for (unsigned char bad : {0x80, 0xBF, 0xC0, 0xC1, 0xF5, 0xFF}) {
    Collect c;
    c.bytes({bad});
    EXPECT_EQ(c.text, kReplacement) << int(bad);
  }
}

TEST(Utf8Stream, RejectsOverlongsSurrogatesAndTooLarge) {
  Collect overlong;
  overlong.bytes({0xE0, 0x80, 0x80});  // overlong U+0000: E0 then 80 is already invalid
  EXPECT_EQ(overlong.text.substr(0, 3), kReplacement);
  Collect surrogate;
  surrogate.bytes({0xED, 0xA0, 0x80});  // U+D800
  EXPECT_EQ(surrogate.text.substr(0, 3), kReplacement);
  Collect big;
  big.bytes({0xF4, 0x90, 0x80, 0x80});  // U+110000
  EXPECT_EQ(big.text.substr(0, 3), kReplacement);
}

TEST(Utf8Stream, FlushReplacesAnUnfinishedCharacter) {
  Collect c;
  c.bytes({0xF0, 0x9F, 0x90});
  c.stream.flush();
  EXPECT_EQ(c.text, kReplacement);
  c.bytes({'o', 'k'});
  EXPECT_EQ(c.text, kReplacement + "ok");
}

}  // namespace
}  // namespace pocketlm
