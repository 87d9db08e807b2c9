// What a bare-metal board lends the firmware program (firmware_main.cpp), which runs the engine
// through its C API on every board alike: QEMU's Cortex-M4F (src/ports/cortex_m), the Xtensa LX7
// sim machine (src/ports/xtensa_sim) and the MIPS32 Malta board laid out as a PSP
// (src/ports/mips_psp). A board folder holds its reset code and linker script, and implements:
//
// - the functions below;
// - the POSIX-style calls the program and SemihostingStorage make, over the board's semihosting
//   (Arm's SYS_* calls through newlib's rdimon, Xtensa's simcall, MIPS's UHI): open (O_RDONLY),
//   read, write (descriptor 1 is the host's stdout), lseek, close and _exit;
// - its linker script puts the section `.tier<i>` of each RAM tier i of the device profile in the
//   memory that stands for that tier (internal SRAM, PSRAM, a PSP's user heap).
//
// The board's reset code calls main() and passes its value to _exit: 0 is a passed case. A fault
// the CPU takes (an unaligned load, a trapping FP operation) prints one line starting "error:"
// with the PC and the cause, and exits with a non-zero status.
#pragma once

#include <cstdint>

namespace pocketlm::firmware {

// The board's name and instruction set, printed with the counts ("Xtensa LX7", "MIPS32", ...).
const char *isa_name();

// The instruction clock: start_clock() once, then clock_ticks() counts from it, 64-bit. One
// tick is instructions_per_tick() instructions, exactly, under QEMU's `-icount shift=0` (one
// instruction per nanosecond of virtual time) with the board's timer clock.
void start_clock();
std::uint64_t clock_ticks();
std::uint64_t ticks_per_second();
std::uint64_t instructions_per_tick();

// The FPU's sticky exception flags since clear_fp_flags(), as kFpInvalid | kFpDivideByZero |
// kFpOverflow: any of them fails a case, as the operation would have trapped on a PSP. A board
// whose FPU traps on them (the PSP's FCR31 0x0E00) never returns here with one raised.
inline constexpr std::uint32_t kFpInvalid = 1, kFpDivideByZero = 2, kFpOverflow = 4;
void clear_fp_flags();
std::uint32_t fp_flags();

// Arms the FPU as the device runs it (the PSP's traps; nothing on boards without traps); called
// before the first token.
void arm_fp_traps();

// The deepest stack the program used, in bytes: stack_watermark.cpp (shared) paints the stack
// between the linker script's __stack_limit and __stack_top at reset (paint_stack()) and reads it.
std::uint32_t stack_high_water();

// The board's planted violation (images built with POCKETLM_FIRMWARE_PLANTED_FAULT), run after the
// generation: an operation its guard must catch, by a fault (an unaligned load, a trapping 0/0) or
// in the FP flags read right after (an overflow on an FPU without traps). On a broken guard the
// case passes, which scripts/run-firmware-golden reports as a failure.
void planted_fault();

}  // namespace pocketlm::firmware
