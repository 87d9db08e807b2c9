// Stack high-water mark: the stack (between the linker script's __stack_limit and __stack_top) is
// filled with a pattern at reset, and the deepest word that no longer holds it shows how much
// stack the program ever used (bytes), whatever the call path — function pointers and virtual
// calls included, which a static call graph cannot see. stack_high_water() (board.h) reads it.
#pragma once

namespace pocketlm::firmware {

// Fills the stack below the current frame with the pattern. Call once, early, from reset.
void paint_stack();

}  // namespace pocketlm::firmware
