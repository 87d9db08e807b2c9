// The MIPS32 Malta board laid out as a PSP-1000 (src/ports/firmware/board.h): the instruction
// clock from CP0 Count, the FPU's flags and the PSP's traps in FCSR (FCR31) and the planted 0/0.
#include <cstdint>

#include <unistd.h>

#include "ports/firmware/board.h"
#include "ports/firmware/counter64.h"

namespace pocketlm::firmware {
namespace {

// Count runs at half the CPU clock (the 24Kf's CCRes is 2) and Malta's CPU clock is 320 MHz, but
// QEMU 7.2 keeps Count's period as whole nanoseconds: cp0_count_ns = clock_ticks_to_ns(cpu clock,
// 2) = 6 (6.25 truncated; target/mips/cpu.c), and Count = virtual ns / 6. Under `-icount shift=0`
// one instruction is one ns of virtual time, so a Count tick is exactly 6 instructions (measured:
// 9,000,000 instructions of a 4-instruction loop gave 1,500,000 ticks). Later QEMUs derive
// Count from a divided Clock (6.25 ns): start_clock() measures the rate and warns of another.
constexpr std::uint64_t kInstructionsPerTick = 6;
// 1e9 / 6 rounded: the firmware turns ticks to seconds and back with this same value, which
// gives the tick count back exactly.
constexpr std::uint64_t kTicksPerSecond = 166'666'667;

std::uint32_t count() {
  std::uint32_t v;
  __asm__ volatile("mfc0 %0, $9" : "=r"(v));
  return v;
}

// A loop of 4 instructions an iteration (addiu, nop, bnez, its delay slot's nop) run 15,000 times:
// 60,000 instructions, 10,000 Count ticks at 6 instructions a tick (and one or two more for the
// reads around it and the phase of the first). Another count means another QEMU's Count rate or
// no -icount: the program still runs (a planted case need not be counted), but it says that its
// counts are not instructions.
void check_clock_rate() {
  std::uint32_t iterations = 15'000;
  const std::uint32_t before = count();
  __asm__ volatile(
      ".set push\n.set noreorder\n"
      "1: addiu %0, %0, -1\n nop\n bnez %0, 1b\n nop\n"
      ".set pop"
      : "+r"(iterations));
  const std::uint32_t ticks = count() - before;
  if (ticks < 10'000 || ticks > 10'002) {
    static const char message[] =
        "warning: CP0 Count does not tick once every 6 instructions (QEMU 7.2 with -icount shift=0 does):"
        " the instruction counts are wrong\n";
    ::write(1, message, sizeof message - 1);
  }
}

// Count is 32 bits and wraps every 25.8 G instructions: counter64.h extends it.
Counter64 g_count;

std::uint32_t fcsr() {
  std::uint32_t v;
  __asm__ volatile("cfc1 %0, $31" : "=r"(v));
  return v;
}
void set_fcsr(std::uint32_t v) { __asm__ volatile("ctc1 %0, $31" : : "r"(v)); }

// FCSR: flags (sticky) V 6, Z 5, O 4, U 3, I 2; cause V 16, Z 15, O 14, U 13, I 12, E 17.
constexpr std::uint32_t kFlagBits = 0x1F << 2, kCauseBits = 0x3F << 12;
constexpr std::uint32_t kFlagInvalid = 1u << 6, kFlagDivideByZero = 1u << 5, kFlagOverflow = 1u << 4;
// The PSP's power-on FCR31 (shared/design/device-fidelity.md 2.2): enables V (11), Z (10), O (9).
constexpr std::uint32_t kPspFcr31 = 0x00000E00;

}  // namespace

const char* isa_name() { return "MIPS32"; }

void start_clock() {
  check_clock_rate();
  g_count.start(count());
}

std::uint64_t clock_ticks() {
  return g_count.read(count());
}

std::uint64_t ticks_per_second() { return kTicksPerSecond; }
std::uint64_t instructions_per_tick() { return kInstructionsPerTick; }

// The cause bits go with the flags: a cause bit whose enable is set makes ctc1 itself trap.
void clear_fp_flags() { set_fcsr(fcsr() & ~(kFlagBits | kCauseBits)); }

std::uint32_t fp_flags() {
  const std::uint32_t v = fcsr();
  return ((v & kFlagInvalid) ? kFpInvalid : 0) | ((v & kFlagDivideByZero) ? kFpDivideByZero : 0) |
         ((v & kFlagOverflow) ? kFpOverflow : 0);
}

// Round to nearest, no flush to zero (the PSP's FS=0), flags cleared, traps on V, Z and O.
void arm_fp_traps() { set_fcsr(kPspFcr31); }

// 0/0 in single precision: div.s with both operands 0 is invalid (V), which traps with FCR31
// 0x0E00 (ExcCode 15). The operands are volatile so that the compiler cannot fold or drop it.
void planted_fault() {
  volatile float zero = 0.0f;
  volatile float result = zero / zero;
  (void)result;
}

}  // namespace pocketlm::firmware
