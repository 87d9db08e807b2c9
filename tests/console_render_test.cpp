// The console renderer (ui/console.h) drawn into a PSP-sized framebuffer, written as a PNG by
// the CLI's writer, read back with libpng and compared pixel by pixel with a bitmap built here
// independently: glyphs read by this test from the PSF console font itself, the box for a
// missing glyph and the kana bitmaps written out by hand (Misaki Gothic's 8x8 strike).
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "png_file.h"
#include "pocketlm/ui/console.h"
#include "test_support.h"

#if POCKETLM_HAVE_PNG
#include <png.h>
#include <zlib.h>
#endif

namespace pocketlm {
namespace {

constexpr std::uint32_t kBackground = 0xFF000000u;  // 0xAABBGGRR
constexpr std::uint32_t kPrompt = 0xFF00FFFFu;      // yellow
constexpr std::uint32_t kGenerated = 0xFFFFFFFFu;   // white

#if POCKETLM_HAVE_PNG
// The test's own reading of a PSF1 font with a Unicode table (the format of
// console-setup's Lat15-VGA8): code point -> 8 rows.
std::map<std::uint32_t, std::vector<unsigned char>> read_psf1(const std::string& path) {
  std::map<std::uint32_t, std::vector<unsigned char>> glyphs;
  gzFile f = gzopen(path.c_str(), "rb");
  EXPECT_NE(f, nullptr) << path;
  if (!f) return glyphs;
  std::vector<unsigned char> data;
  unsigned char buf[4096];
  int got;
  while ((got = gzread(f, buf, sizeof buf)) > 0) data.insert(data.end(), buf, buf + got);
  gzclose(f);
  EXPECT_EQ(data[0], 0x36);
  EXPECT_EQ(data[1], 0x04);
  EXPECT_EQ(data[3], 8) << "8 rows per glyph";
  const int count = data[2] & 1 ? 512 : 256;
  std::size_t at = 4 + static_cast<std::size_t>(count) * 8;
  bool sequence = false;
  for (int g = 0; g < count && at + 1 < data.size(); at += 2) {
    const unsigned v = data[at] | data[at + 1] << 8;
    if (v == 0xFFFF) {
      ++g;
      sequence = false;
    } else if (v == 0xFFFE) {
      sequence = true;
    } else if (!sequence && !glyphs.count(v)) {
      glyphs[v].assign(data.begin() + 4 + g * 8, data.begin() + 4 + g * 8 + 8);
    }
  }
  return glyphs;
}

#endif

const std::vector<unsigned char> kBox = {0x00, 0x7E, 0x42, 0x42, 0x42, 0x42, 0x7E, 0x00};
// Misaki Gothic's 8x8 bitmaps (fonts-misaki, EBDT strike) of ね (U+306D) and こ (U+3053).
const std::vector<unsigned char> kNe = {0x20, 0x2C, 0xF2, 0x22, 0x66, 0xAA, 0x26, 0x00};
const std::vector<unsigned char> kKo = {0x00, 0x3C, 0x00, 0x00, 0x20, 0x40, 0x3E, 0x00};

struct Cell {
  int column, row;
  std::vector<unsigned char> glyph;
  std::uint32_t color;
};

#if POCKETLM_HAVE_PNG
std::vector<std::uint32_t> read_png(const std::string& path, int* width, int* height) {
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  EXPECT_TRUE(png_image_begin_read_from_file(&image, path.c_str())) << path;
  image.format = PNG_FORMAT_RGBA;
  std::vector<unsigned char> rgba(PNG_IMAGE_SIZE(image));
  EXPECT_TRUE(png_image_finish_read(&image, nullptr, rgba.data(), 0, nullptr));
  *width = static_cast<int>(image.width);
  *height = static_cast<int>(image.height);
  std::vector<std::uint32_t> out(rgba.size() / 4);
  for (std::size_t i = 0; i < out.size(); ++i)  // back to 0xAABBGGRR
    out[i] = rgba[4 * i] | rgba[4 * i + 1] << 8 | rgba[4 * i + 2] << 16 | static_cast<std::uint32_t>(0xFF) << 24;
  return out;
}
#endif

TEST(ConsoleRender, KnownStringMatchesTheFontBitmapsPixelForPixel) {
#if !POCKETLM_HAVE_PNG
  GTEST_SKIP() << "this build has no libpng";
#else
  const auto psf = read_psf1(POCKETLM_CONSOLE_PSF);
  ASSERT_FALSE(psf.empty());
  std::vector<std::uint32_t> pixels(480 * 272, 0x12345678u);
  Framebuffer fb{pixels.data(), 480, 272, 480};
  Console console;
  ASSERT_TRUE(console.init(fb, &kConsoleFont, kBackground, kPrompt).ok());
  EXPECT_EQ(console.columns(), 60);
  EXPECT_EQ(console.rows(), 34);
  // ASCII, Latin-1 (é ü), a kana word (ねこ), an unassigned code point (U+0378), in two colours;
  // the UTF-8 of ね is split across two writes.
  console.write("Hi \xC3\xA9\xC3\xBC ", 8);
  console.set_color(kGenerated);
  console.write("\xE3\x81", 2);
  console.write("\xAD\xE3\x81\x93 \xCD\xB8\n", 8);
  console.write("ok", 2);

  const bool kana = POCKETLM_FONT_HAS_KANA != 0;
  std::vector<Cell> cells = {
      {0, 0, psf.at('H'), kPrompt},      {1, 0, psf.at('i'), kPrompt},
      {2, 0, psf.at(' '), kPrompt},      {3, 0, psf.at(0xE9), kPrompt},
      {4, 0, psf.at(0xFC), kPrompt},     {5, 0, psf.at(' '), kPrompt},
      {6, 0, kana ? kNe : kBox, kGenerated}, {7, 0, kana ? kKo : kBox, kGenerated},
      {8, 0, psf.at(' '), kGenerated},   {9, 0, kBox, kGenerated},
      {0, 1, psf.at('o'), kGenerated},   {1, 1, psf.at('k'), kGenerated},
  };
  ASSERT_EQ(psf.count(0x378), 0u) << "U+0378 must be missing from the font";
  std::vector<std::uint32_t> expected(480 * 272, kBackground);
  for (const Cell& c : cells)
    for (int y = 0; y < 8; ++y)
      for (int x = 0; x < 8; ++x)
        if ((c.glyph[static_cast<std::size_t>(y)] >> (7 - x)) & 1)
          expected[static_cast<std::size_t>((c.row * 8 + y) * 480 + c.column * 8 + x)] = c.color;

  const std::string path = test::temp_dir() + "/screen.png";
  ASSERT_TRUE(cli::write_png(fb, path, "--png").ok());
  int w = 0, h = 0;
  const std::vector<std::uint32_t> got = read_png(path, &w, &h);
  ASSERT_EQ(w, 480);
  ASSERT_EQ(h, 272);
  int wrong = 0;
  for (std::size_t i = 0; i < expected.size(); ++i)
    if (got[i] != expected[i] && wrong++ < 5)
      ADD_FAILURE() << "pixel (" << i % 480 << ", " << i / 480 << "): " << std::hex << got[i] << " expected "
                    << expected[i];
  EXPECT_EQ(wrong, 0);
#endif
}

TEST(ConsoleRender, WrapsToTheTopAndClearsTheRowItEnters) {
  std::vector<std::uint32_t> pixels(320 * 240);
  Framebuffer fb{pixels.data(), 320, 240, 320};
  Console console;
  ASSERT_TRUE(console.init(fb, &kConsoleFont, kBackground, kPrompt).ok());
  EXPECT_EQ(console.columns(), 40);
  EXPECT_EQ(console.rows(), 30);
  for (int r = 0; r < 30; ++r) console.write("########################################", 40);  // 40 per row
  EXPECT_EQ(console.cursor_row(), 29);
  EXPECT_EQ(console.wraps(), 0);
  console.put('x');  // row 29 is full: the next cell is on row 0, cleared first
  EXPECT_EQ(console.wraps(), 1);
  EXPECT_EQ(console.cursor_row(), 0);
  EXPECT_EQ(console.cursor_column(), 1);
  // Row 0 holds 'x' and background only; row 1 still shows the old '#' cells.
  const std::uint8_t* x = kConsoleFont.find('x');
  ASSERT_NE(x, nullptr);
  for (int px = 8; px < 320; ++px)
    for (int py = 0; py < 8; ++py) ASSERT_EQ(pixels[static_cast<std::size_t>(py * 320 + px)], kBackground);
  bool row1_has_ink = false;
  for (int px = 0; px < 320; ++px) row1_has_ink |= pixels[static_cast<std::size_t>(9 * 320 + px)] == kPrompt;
  EXPECT_TRUE(row1_has_ink);
}

TEST(ConsoleRender, InvalidUtf8DrawsTheReplacementGlyph) {
  std::vector<std::uint32_t> a(64 * 8), b(64 * 8);
  Framebuffer fa{a.data(), 64, 8, 64}, fbb{b.data(), 64, 8, 64};
  Console ca, cb;
  ASSERT_TRUE(ca.init(fa, &kConsoleFont, kBackground, kPrompt).ok());
  ASSERT_TRUE(cb.init(fbb, &kConsoleFont, kBackground, kPrompt).ok());
  ca.write("\xC3" "A\x80", 3);  // a cut sequence, then A, then a stray continuation byte
  cb.put(0xFFFD);
  cb.put('A');
  cb.put(0xFFFD);
  EXPECT_EQ(a, b);
}

// The PSP's framebuffer: 480 visible pixels in lines of 512; the 32 beyond stay untouched, and
// the screen is the same as with a tight stride.
TEST(ConsoleRender, StrideBeyondTheWidthIsLeftAlone) {
  std::vector<std::uint32_t> wide(512 * 272, 0x12345678u), tight(480 * 272);
  Console a, b;
  ASSERT_TRUE(a.init(Framebuffer{wide.data(), 480, 272, 512}, &kConsoleFont, kBackground, kPrompt).ok());
  ASSERT_TRUE(b.init(Framebuffer{tight.data(), 480, 272, 480}, &kConsoleFont, kBackground, kPrompt).ok());
  for (int i = 0; i < 40; ++i) {
    a.write("Once upon a time, ", 18);
    b.write("Once upon a time, ", 18);
  }
  for (int y = 0; y < 272; ++y)
    for (int x = 0; x < 512; ++x) {
      const std::uint32_t got = wide[static_cast<std::size_t>(y * 512 + x)];
      if (x >= 480)
        ASSERT_EQ(got, 0x12345678u) << x << "," << y;
      else
        ASSERT_EQ(got, tight[static_cast<std::size_t>(y * 480 + x)]) << x << "," << y;
    }
}

TEST(ConsoleRender, RefusesAFramebufferSmallerThanACell) {
  std::uint32_t p[16];
  Console c;
  EXPECT_FALSE(c.init(Framebuffer{p, 4, 4, 4}, &kConsoleFont, 0, 0).ok());
}

}  // namespace
}  // namespace pocketlm
