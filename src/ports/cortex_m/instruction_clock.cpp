#include "ports/cortex_m/instruction_clock.h"

namespace pocketlm::firmware {
namespace {

// SysTick's registers (ARMv7-M architecture reference manual, B3.3).
volatile std::uint32_t &syst_csr() { return *reinterpret_cast<volatile std::uint32_t *>(0xE000E010); }
volatile std::uint32_t &syst_rvr() { return *reinterpret_cast<volatile std::uint32_t *>(0xE000E014); }
volatile std::uint32_t &syst_cvr() { return *reinterpret_cast<volatile std::uint32_t *>(0xE000E018); }
constexpr std::uint32_t kEnable = 1u << 0, kTickInt = 1u << 1, kCpuClock = 1u << 2;
constexpr std::uint32_t kReload = 0x00FFFFFF;  // the full 24 bits: 2^24 ticks per wrap

volatile std::uint32_t g_wraps = 0;

}  // namespace

void start_clock() {
  syst_rvr() = kReload;
  syst_cvr() = 0;  // any write clears the counter; it reloads on the next tick
  syst_csr() = kEnable | kTickInt | kCpuClock;
}

std::uint64_t clock_ticks() {
  // The counter counts down. A wrap between reading the wrap count and the counter is seen as a
  // changed wrap count, and the pair is read again.
  for (;;) {
    const std::uint32_t wraps = g_wraps;
    const std::uint32_t value = syst_cvr();
    if (wraps == g_wraps) return (static_cast<std::uint64_t>(wraps) << 24) + (kReload - value);
  }
}

}  // namespace pocketlm::firmware

extern "C" void systick_handler() { pocketlm::firmware::g_wraps = pocketlm::firmware::g_wraps + 1; }
