// Console: a character grid drawn with an 8x8 bitmap font into a 32-bit framebuffer the caller
// owns (the PSP's 480x272 screen: 60 columns x 34 rows; a 320x240 display: 40 x 30). It is how
// a device shows a chat: text arrives as UTF-8 (generated pieces, or the on-screen keyboard's
// UTF-16 converted by text/utf16.h), is decoded per code point, and each code point fills one
// cell in the current colour. No heap, no printf: it builds for bare metal.
//
// Rules:
// - UTF-8 is decoded per code point; a sequence may be split across write() calls. A byte that
//   cannot start or continue a character draws U+FFFD's glyph (the font's, else the box).
// - A code point the font lacks is drawn as a box (kMissingGlyph): an outline of the cell.
// - '\n' starts a new line, '\r' goes to column 0, '\t' is a space; other C0 controls and DEL
//   draw nothing.
// - A full line continues on the next row; past the last row the cursor wraps to the top row
//   (as the PSP's debug screen does): the rows are not scrolled. Each row is cleared to the
//   background when the cursor moves onto it, so after a wrap the newest text replaces the oldest
//   line by line while the rows below still show the previous page.
#pragma once

#include <cstddef>
#include <cstdint>

#include "pocketlm/base/status.h"
#include "pocketlm/ui/bitmap_font.h"

namespace pocketlm {

// 32-bit pixels, written as given (the PSP's 8888 format is 0xAABBGGRR: red in the low byte).
struct Framebuffer {
  std::uint32_t* pixels = nullptr;
  int width = 0;   // pixels
  int height = 0;  // pixels
  int stride = 0;  // pixels from one row to the next (>= width; the PSP's is 512)
};

class Console {
 public:
  static constexpr int kCellPixels = 8;
  // The box drawn for a missing glyph (rows from the top, bit 7 leftmost).
  static constexpr std::uint8_t kMissingGlyph[8] = {0x00, 0x7E, 0x42, 0x42, 0x42, 0x42, 0x7E, 0x00};

  // Uses `fb` (width and height at least one cell, stride >= width) and `font` (both must
  // outlive the console) and clears the screen to `background`. The grid is width / 8 columns
  // by height / 8 rows; pixels past it stay untouched.
  Status init(const Framebuffer& fb, const BitmapFont* font, std::uint32_t background, std::uint32_t foreground);

  int columns() const { return columns_; }
  int rows() const { return rows_; }
  int cursor_column() const { return column_; }
  int cursor_row() const { return row_; }
  // Times the cursor wrapped from the last row to the top.
  int wraps() const { return wraps_; }

  // The colour of the cells written from now on.
  void set_color(std::uint32_t foreground) { foreground_ = foreground; }
  // Decodes UTF-8 and draws each complete code point.
  void write(const char* text, std::size_t len);
  // Draws one code point (control characters as in the rules above).
  void put(std::uint32_t code_point);
  // Clears the screen and puts the cursor at the top left.
  void clear();

 private:
  void draw_cell(int column, int row, const std::uint8_t* glyph);
  void clear_row(int row);
  void new_line();
  void decode(unsigned char byte);

  Framebuffer fb_;
  const BitmapFont* font_ = nullptr;
  std::uint32_t background_ = 0, foreground_ = 0;
  int columns_ = 0, rows_ = 0;
  int column_ = 0, row_ = 0;
  int wraps_ = 0;
  // UTF-8 decoder state: the code point so far, continuation bytes still expected, and the
  // allowed range of the next one (no overlong forms, surrogates or values past U+10FFFF).
  std::uint32_t code_point_ = 0;
  int need_ = 0;
  unsigned char lo_ = 0x80, hi_ = 0xBF;
};

}  // namespace pocketlm
