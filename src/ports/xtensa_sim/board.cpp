// The Xtensa sim board's side of board.h: CCOUNT as the instruction clock, the FPU's FSR as the
// sticky FP flags and the planted unaligned load (the stack's high-water mark is shared:
// ports/firmware/stack_watermark.cpp).
#include "ports/firmware/board.h"
#include "ports/firmware/counter64.h"

#include <cstdint>

namespace pocketlm::firmware {
namespace {

// CCOUNT counts at de233_fpu's configured 40 MHz of QEMU's virtual clock; under `-icount shift=0`
// one instruction is one nanosecond, so CCOUNT advances once every 25 instructions (measured:
// README.md). It is 32 bits (a wrap every 107 s of virtual time): counter64.h extends it.
constexpr std::uint64_t kTicksPerSecond = 40'000'000;
constexpr std::uint64_t kInstructionsPerTick = 25;

Counter64 g_count;

std::uint32_t ccount() {
  std::uint32_t v;
  asm volatile("rsr %0, ccount" : "=r"(v));
  return v;
}

// FSR's sticky flags (Xtensa FPU: bits 7-11 inexact, underflow, overflow, divide-by-zero, invalid).
constexpr std::uint32_t kFsrOverflow = 1u << 9, kFsrDivideByZero = 1u << 10, kFsrInvalid = 1u << 11;

std::uint32_t fsr() {
  std::uint32_t v;
  asm volatile("rur %0, fsr" : "=r"(v));
  return v;
}

}  // namespace

const char *isa_name() { return "Xtensa LX7"; }

void start_clock() {
  asm volatile("wsr %0, ccount\n\trsync" : : "r"(0u));
  g_count.start(0);
}

std::uint64_t clock_ticks() {
  return g_count.read(ccount());
}

std::uint64_t ticks_per_second() { return kTicksPerSecond; }
std::uint64_t instructions_per_tick() { return kInstructionsPerTick; }

void clear_fp_flags() { asm volatile("wur %0, fsr" : : "r"(0u)); }

std::uint32_t fp_flags() {
  const std::uint32_t v = fsr();
  return ((v & kFsrInvalid) ? kFpInvalid : 0) | ((v & kFsrDivideByZero) ? kFpDivideByZero : 0) |
         ((v & kFsrOverflow) ? kFpOverflow : 0);
}

}  // namespace pocketlm::firmware

// Float division is software here (LLVM calls soft-fp's __divsf3): its exceptions go into FSR as
// the FPU's own would (sfp-machine.h), so a 1/0 still fails the firmware's flag check.
extern "C" void pocketlm_soft_fp_raise(int flags) {
  using namespace pocketlm::firmware;
  const std::uint32_t bits = ((flags & kFpInvalid) ? kFsrInvalid : 0) | ((flags & kFpDivideByZero) ? kFsrDivideByZero : 0) |
                             ((flags & kFpOverflow) ? kFsrOverflow : 0);
  asm volatile("wur %0, fsr" : : "r"(fsr() | bits));
}

namespace pocketlm::firmware {

// The Xtensa FPU has no traps (its FCR holds the rounding mode and, in QEMU, ignored enables):
// the flags are checked after the run instead.
void arm_fp_traps() {}

// A 32-bit load from an address one byte past a word: de233_fpu, like the ESP32-S3, raises
// LoadStoreAlignment (EXCCAUSE 9) for it, and the vectors end the run with its PC.
void planted_fault() {
  static std::uint32_t words[2] = {0x11223344u, 0x55667788u};
  const auto address = reinterpret_cast<std::uintptr_t>(words) + 1;
  std::uint32_t value;
  // l32i from asm: the compiler may not emit a misaligned access for C++ code on its own.
  asm volatile("l32i %0, %1, 0" : "=r"(value) : "r"(address) : "memory");
  (void)value;
}

}  // namespace pocketlm::firmware
