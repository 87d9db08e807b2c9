// BitmapFont: 8x8 glyphs by Unicode code point (BMP). The console's font is generated from
// Debian's console fonts (scripts/make-console-font.py) into a table like this one; the engine
// only looks glyphs up, so a firmware can link another table of the same shape.
#pragma once

#include <cstdint>

namespace pocketlm {

struct BitmapFont {
  // Each glyph is 8 bytes, one per pixel row from the top; bit 7 is the leftmost pixel.
  static constexpr int kGlyphBytes = 8;
  const std::uint16_t* code_points;  // ascending
  const std::uint8_t* glyphs;        // count * kGlyphBytes, in the order of code_points
  int count;

  // The glyph of `cp`, or nullptr when the font has none (binary search).
  const std::uint8_t* find(std::uint32_t cp) const {
    if (cp > 0xFFFF) return nullptr;
    int lo = 0, hi = count;
    while (lo < hi) {
      const int mid = lo + (hi - lo) / 2;
      if (code_points[mid] < cp)
        lo = mid + 1;
      else
        hi = mid;
    }
    return lo < count && code_points[lo] == cp ? glyphs + lo * kGlyphBytes : nullptr;
  }
};

// The table scripts/make-console-font.py generates (the build's pocketlm_console_font library).
extern const BitmapFont kConsoleFont;

}  // namespace pocketlm
