#include "ports/firmware/stack_watermark.h"

#include <cstdint>

#include "ports/firmware/board.h"

// The stack's ends, from the board's linker script.
extern "C" unsigned char __stack_top[], __stack_limit[];

namespace pocketlm::firmware {

namespace {
constexpr std::uint32_t kPaint = 0xA5C3A5C3u;
}

void paint_stack() {
  // Up to 64 bytes below this frame: the words above are in use right now.
  const auto frame = reinterpret_cast<std::uintptr_t>(__builtin_frame_address(0));
  for (std::uintptr_t a = reinterpret_cast<std::uintptr_t>(__stack_limit); a + 4 <= frame - 64; a += 4)
    *reinterpret_cast<volatile std::uint32_t*>(a) = kPaint;
}

std::uint32_t stack_high_water() {
  std::uintptr_t a = reinterpret_cast<std::uintptr_t>(__stack_limit);
  const std::uintptr_t top = reinterpret_cast<std::uintptr_t>(__stack_top);
  while (a < top && *reinterpret_cast<const volatile std::uint32_t*>(a) == kPaint) a += 4;
  return static_cast<std::uint32_t>(top - a);
}

}  // namespace pocketlm::firmware
