// Reset for the MPS2-AN386 image (QEMU): the vector table, then what a C++ runtime needs before
// main() — the FPU enabled (the engine is built for the hard-float ABI), .data copied from its
// load address, .bss zeroed, the stack painted so that its high-water mark can be measured,
// newlib's semihosting streams opened and static constructors run. Exit goes to the host
// through semihosting, so `qemu-system-arm ... -semihosting` returns.
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "ports/cortex_m/instruction_clock.h"
#include "ports/firmware/stack_watermark.h"

extern "C" {
extern unsigned char __data_start[], __data_end[], __data_load[], __bss_start__[], __bss_end__[];
extern unsigned char __stack_top[], __stack_limit[];
void __libc_init_array();
void initialise_monitor_handles();  // newlib's rdimon: stdin/stdout/stderr over semihosting
int main();

// What newlib's start files would define: the DSO handle of static destructors and the empty
// legacy init/fini hooks (constructors run from .init_array).
void* __dso_handle = nullptr;
void _init() {}
void _fini() {}

[[noreturn]] void reset_handler() {
  // CPACR: full access to coprocessors 10 and 11 (the FPU).
  *reinterpret_cast<volatile std::uint32_t*>(0xE000ED88) |= 0xFu << 20;
  __asm volatile("dsb\n\tisb");
  std::memcpy(__data_start, __data_load, static_cast<std::size_t>(__data_end - __data_start));
  std::memset(__bss_start__, 0, static_cast<std::size_t>(__bss_end__ - __bss_start__));
  pocketlm::firmware::paint_stack();
  initialise_monitor_handles();
  __libc_init_array();
  std::exit(main());
}

[[noreturn]] void fault_handler() {
  for (;;) __asm volatile("bkpt #0");
}

// Initial stack pointer, reset, then NMI, HardFault, MemManage, BusFault, UsageFault, four
// reserved words, SVCall, DebugMonitor, a reserved word, PendSV and SysTick (the instruction
// clock, instruction_clock.h).
__attribute__((section(".vectors"), used)) void* const g_vectors[] = {
    __stack_top,
    reinterpret_cast<void*>(reset_handler),
    reinterpret_cast<void*>(fault_handler),
    reinterpret_cast<void*>(fault_handler),
    reinterpret_cast<void*>(fault_handler),
    reinterpret_cast<void*>(fault_handler),
    reinterpret_cast<void*>(fault_handler),
    nullptr,
    nullptr,
    nullptr,
    nullptr,
    reinterpret_cast<void*>(fault_handler),
    reinterpret_cast<void*>(fault_handler),
    nullptr,
    reinterpret_cast<void*>(fault_handler),
    reinterpret_cast<void*>(systick_handler),
};
}
