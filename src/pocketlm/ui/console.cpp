#include "pocketlm/ui/console.h"

namespace pocketlm {

Status Console::init(const Framebuffer& fb, const BitmapFont* font, std::uint32_t background,
                     std::uint32_t foreground) {
  if (!fb.pixels || fb.width < kCellPixels || fb.height < kCellPixels || fb.stride < fb.width)
    return Status::error(StatusCode::kInvalidArgument,
                         "console: framebuffer %dx%d (stride %d) is not at least one %dx%d cell", fb.width, fb.height,
                         fb.stride, kCellPixels, kCellPixels);
  if (!font) return Status::error(StatusCode::kInvalidArgument, "console: no font");
  fb_ = fb;
  font_ = font;
  background_ = background;
  foreground_ = foreground;
  columns_ = fb.width / kCellPixels;
  rows_ = fb.height / kCellPixels;
  clear();
  return Status();
}

void Console::clear() {
  for (int r = 0; r < rows_; ++r) clear_row(r);
  column_ = row_ = 0;
  need_ = 0;
}

void Console::clear_row(int row) {
  for (int y = row * kCellPixels; y < (row + 1) * kCellPixels; ++y) {
    std::uint32_t* line = fb_.pixels + static_cast<std::size_t>(y) * static_cast<std::size_t>(fb_.stride);
    for (int x = 0; x < columns_ * kCellPixels; ++x) line[x] = background_;
  }
}

void Console::draw_cell(int column, int row, const std::uint8_t* glyph) {
  for (int gy = 0; gy < kCellPixels; ++gy) {
    const int y = row * kCellPixels + gy;
    std::uint32_t* line = fb_.pixels + static_cast<std::size_t>(y) * static_cast<std::size_t>(fb_.stride) +
                          column * kCellPixels;
    for (int gx = 0; gx < kCellPixels; ++gx) line[gx] = (glyph[gy] >> (7 - gx)) & 1 ? foreground_ : background_;
  }
}

void Console::new_line() {
  column_ = 0;
  if (++row_ == rows_) {
    row_ = 0;
    ++wraps_;
  }
  clear_row(row_);
}

void Console::put(std::uint32_t cp) {
  if (cp == '\n') {
    new_line();
    return;
  }
  if (cp == '\r') {
    column_ = 0;
    return;
  }
  if (cp == '\t') cp = ' ';
  if (cp < 0x20 || cp == 0x7F) return;
  if (column_ == columns_) new_line();
  const std::uint8_t* glyph = font_->find(cp);
  draw_cell(column_, row_, glyph ? glyph : kMissingGlyph);
  ++column_;
}

void Console::write(const char* text, std::size_t len) {
  for (std::size_t i = 0; i < len; ++i) decode(static_cast<unsigned char>(text[i]));
}

void Console::decode(unsigned char b) {
  if (need_ > 0) {
    if (b >= lo_ && b <= hi_) {
      code_point_ = (code_point_ << 6) | (b & 0x3Fu);
      lo_ = 0x80;
      hi_ = 0xBF;
      if (--need_ == 0) put(code_point_);
      return;
    }
    // The character was cut short: one replacement for it, then this byte starts afresh.
    need_ = 0;
    put(0xFFFD);
  }
  lo_ = 0x80;
  hi_ = 0xBF;
  if (b < 0x80) {
    put(b);
  } else if (b >= 0xC2 && b <= 0xDF) {
    code_point_ = b & 0x1Fu;
    need_ = 1;
  } else if (b >= 0xE0 && b <= 0xEF) {
    code_point_ = b & 0x0Fu;
    need_ = 2;
    if (b == 0xE0) lo_ = 0xA0;  // no overlong forms
    if (b == 0xED) hi_ = 0x9F;  // no surrogates
  } else if (b >= 0xF0 && b <= 0xF4) {
    code_point_ = b & 0x07u;
    need_ = 3;
    if (b == 0xF0) lo_ = 0x90;
    if (b == 0xF4) hi_ = 0x8F;  // nothing past U+10FFFF
  } else {
    put(0xFFFD);  // a stray continuation byte, C0, C1 or F5..FF
  }
}

}  // namespace pocketlm
