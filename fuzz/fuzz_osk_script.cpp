// Fuzzes the OSK script parser (text/osk_script.h) and the console renderer behind it, as the
// `console` command uses them: arbitrary bytes as a script; each string it accepts goes through
// UTF-16LE -> UTF-8 and is drawn on a small framebuffer. The strings must tile the input
// exactly, stay within kMaxOskUnits and be non-empty; the console must never write outside its
// framebuffer (ASan) or leave its cursor outside the grid.
#include "fuzz_common.h"
#include "pocketlm/text/osk_script.h"
#include "pocketlm/text/utf16.h"
#include "pocketlm/ui/console.h"

using namespace pocketlm;

namespace {
// A tiny font: '#' and U+3042 only, so most code points take the missing-glyph box.
const std::uint16_t kPoints[] = {0x23, 0x3042};
const std::uint8_t kGlyphs[] = {0x24, 0x7E, 0x24, 0x24, 0x7E, 0x24, 0x00, 0x00,
                                0x20, 0x7C, 0x20, 0x3C, 0x6A, 0xB2, 0x64, 0x00};
const BitmapFont kFont = {kPoints, kGlyphs, 2};
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  OskScript script;
  if (!script.init(data, size, "fuzz").ok()) return 0;
  std::vector<std::uint32_t> pixels(40 * 24);  // 5 x 3 cells: wraps quickly
  Console console;
  if (!console.init(Framebuffer{pixels.data(), 40, 24, 40}, &kFont, 0, 1).ok()) std::abort();
  const unsigned char* units = nullptr;
  std::size_t bytes = 0;
  int strings = 0;
  std::size_t covered = size >= 2 && data[0] == 0xFF && data[1] == 0xFE ? 2 : 0;
  std::vector<char> utf8(3 * kMaxOskUnits);
  while (script.next(&units, &bytes)) {
    ++strings;
    if (units != data + covered || bytes == 0 || bytes / 2 > kMaxOskUnits) std::abort();
    covered += bytes + 2;
    std::size_t n = 0;
    if (!utf16le_to_utf8(units, bytes, utf8.data(), utf8.size(), &n).ok()) std::abort();
    console.write(utf8.data(), n);
    console.put('\n');
    if (console.cursor_row() < 0 || console.cursor_row() >= console.rows() || console.cursor_column() < 0 ||
        console.cursor_column() > console.columns())
      std::abort();
  }
  if (strings != script.count() || covered < size || covered > size + 2) std::abort();
  return 0;
}
