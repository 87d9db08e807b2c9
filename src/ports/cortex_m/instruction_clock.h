// A clock that counts instructions on QEMU's mps2-an386: SysTick runs from the 25 MHz CPU clock,
// and under `-icount shift=0` QEMU executes one instruction per nanosecond of virtual time, so one
// tick is exactly 40 instructions (../shared/design/device-fidelity.md §4.2; without -icount the
// ticks follow the host's time). The 24-bit counter wraps every 2^24 ticks (671 M instructions);
// its interrupt counts the wraps, so readings are 64-bit.
#pragma once

#include <cstdint>

namespace pocketlm::firmware {

inline constexpr std::uint64_t kTicksPerSecond = 25'000'000;  // SysTick's clock (CPU clock, 25 MHz)
inline constexpr std::uint64_t kInstructionsPerTick = 40;     // at -icount shift=0: 1 ns per instruction

// Starts SysTick (CPU clock, wrap interrupt on). Call once, before any clock_ticks().
void start_clock();
// Ticks since start_clock(); the SessionOptions::clock of the firmware.
std::uint64_t clock_ticks();

}  // namespace pocketlm::firmware

// The SysTick exception handler (vector 15, startup.cpp): counts a wrap.
extern "C" void systick_handler();
