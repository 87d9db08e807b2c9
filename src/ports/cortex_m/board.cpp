// board.h for QEMU's Cortex-M4F (mps2-an386): SysTick is the instruction clock
// (instruction_clock.h), the FPSCR's cumulative flags the FP check, newlib's rdimon the system
// calls. The M4F's FPU cannot trap, so the planted violation is an overflow the flags must show.
#include <cstdint>

#include "ports/cortex_m/instruction_clock.h"
#include "ports/firmware/board.h"

namespace pocketlm::firmware {
namespace {

// FPSCR's cumulative exception bits: IOC (invalid) 0, DZC (divide-by-zero) 1, OFC (overflow) 2, UFC
// (underflow) 3, IXC (inexact) 4, IDC (input denormal) 7; the first three are board.h's bits.
constexpr std::uint32_t kFpFlags = 0x9F;
constexpr std::uint32_t kFpTrapping = 0x7;

std::uint32_t fpscr() {
  std::uint32_t v = 0;
  __asm__ volatile("vmrs %0, fpscr" : "=r"(v));
  return v;
}

}  // namespace

const char *isa_name() { return "Thumb-2 (Cortex-M4F)"; }
std::uint64_t ticks_per_second() { return kTicksPerSecond; }
std::uint64_t instructions_per_tick() { return kInstructionsPerTick; }

void clear_fp_flags() {
  const std::uint32_t v = fpscr() & ~kFpFlags;
  __asm__ volatile("vmsr fpscr, %0" : : "r"(v));
}

std::uint32_t fp_flags() { return fpscr() & kFpTrapping; }

void arm_fp_traps() {}  // the M4F's FPU has no trap enables: fp_flags() is the check

void planted_fault() {
  volatile float big = 3e38f;
  big = big * 10.0f;
}

}  // namespace pocketlm::firmware
