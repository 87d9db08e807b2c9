// What runs around main() on the Xtensa sim image: the C++ half of reset (vectors.cpp's _start
// calls xtensa_reset with the stack set up) and the fatal-exception reporter its vectors call.
// QEMU's ELF loader writes .data and zeroes .bss's pages already; .bss is zeroed again here so
// that the image does not depend on the loader, as a flashed one could not.
#include <cstddef>
#include <cstdint>

#include <unistd.h>

#include "ports/firmware/fault_line.h"
#include "ports/firmware/stack_watermark.h"

extern "C" {
extern unsigned char __bss_start[], __bss_end[];
extern void (*__init_array_start[])(), (*__init_array_end[])();
}
int main();

namespace {

// EXCCAUSE values (the Xtensa ISA's exception causes) and their names.
const char *cause_name(std::uint32_t cause) {
  switch (cause) {
    case 0: return "IllegalInstruction";
    case 1: return "Syscall";
    case 2: return "InstructionFetchError";
    case 3: return "LoadStoreError";
    case 4: return "Level1Interrupt";
    case 5: return "Alloca";
    case 6: return "IntegerDivideByZero";
    case 8: return "Privileged";
    case 9: return "LoadStoreAlignment";
    case 12: return "InstrPIFDataError";
    case 13: return "LoadStorePIFDataError";
    case 14: return "InstrPIFAddrError";
    case 15: return "LoadStorePIFAddrError";
    case 16: return "InstTLBMiss";
    case 17: return "InstTLBMultiHit";
    case 18: return "InstFetchPrivilege";
    case 20: return "InstFetchProhibited";
    case 24: return "LoadStoreTLBMiss";
    case 25: return "LoadStoreTLBMultiHit";
    case 26: return "LoadStorePrivilege";
    case 28: return "LoadProhibited";
    case 29: return "StoreProhibited";
    default: return cause >= 32 && cause < 40 ? "CoprocessorDisabled" : "Unknown";
  }
}

}  // namespace

extern "C" [[noreturn]] void xtensa_reset() {
  for (unsigned char *p = __bss_start; p < __bss_end; ++p) *static_cast<volatile unsigned char *>(p) = 0;
  pocketlm::firmware::paint_stack();
  for (auto *f = __init_array_start; f < __init_array_end; ++f) (*f)();
  _exit(main());
}

// vectors.cpp's xtensa_fatal_entry: which vector (0 user, 1 kernel, 2 double exception, 4 a
// high-priority interrupt), EXCCAUSE, the faulting PC (EPC1, or DEPC for a double exception) and
// EXCVADDR.
extern "C" [[noreturn]] void xtensa_fatal(std::uint32_t vector, std::uint32_t cause, std::uint32_t pc,
                                          std::uint32_t vaddr) {
  pocketlm::firmware::FaultLine line;
  line.put("error: ");
  if (vector == 2) line.put("double exception: ");
  if (vector == 4) line.put("interrupt: ");
  line.put(cause_name(cause)).put(" (EXCCAUSE ").dec(cause).put(") at PC ").hex(pc);
  line.put(" (EXCVADDR ").hex(vaddr).put(")\n");
  write(1, line.text, line.length);
  _exit(1);
}
