// What runs around main() on the MIPS32 image (crt0.S calls in here): the stack painted for its
// high-water mark, static constructors, main() and its status to the host; and the report of any
// CPU exception, which ends the program: one line "error: <cause> (ExcCode n) at EPC 0x... (FCSR
// 0x...)" and exit status 1. With the PSP's FCR31 (arm_fp_traps) an invalid, divide-by-zero or
// overflowing FP operation is ExcCode 15, the trap that stops a PSP.
#include <cstddef>
#include <cstdint>

#include "ports/firmware/fault_line.h"
#include "ports/firmware/stack_watermark.h"
#include "ports/mips_psp/uhi.h"

extern "C" {
using Constructor = void (*)();
extern Constructor __init_array_start[], __init_array_end[];
int main();
void _exit(int status);
}

namespace {

// MIPS32 Cause.ExcCode names (MIPS32 PRA, table 9.31); unlisted codes are reserved.
const char* cause_name(unsigned code) {
  switch (code) {
    case 0: return "Int";
    case 1: return "Mod";
    case 2: return "TLBL";
    case 3: return "TLBS";
    case 4: return "AdEL";
    case 5: return "AdES";
    case 6: return "IBE";
    case 7: return "DBE";
    case 8: return "Sys";
    case 9: return "Bp";
    case 10: return "RI";
    case 11: return "CpU";
    case 12: return "Ov";
    case 13: return "Tr";
    case 15: return "FPE";
    case 23: return "WATCH";
    case 24: return "MCheck";
    default: return "reserved";
  }
}

}  // namespace

extern "C" [[noreturn]] void mips_psp_start() {
  pocketlm::firmware::paint_stack();
  for (Constructor* c = __init_array_start; c != __init_array_end; ++c) (*c)();
  _exit(main());
  for (;;) {
  }
}

extern "C" [[noreturn]] void mips_psp_exception(std::uint32_t cause, std::uint32_t epc, std::uint32_t fcsr,
                                                std::uint32_t bad_address) {
  const unsigned code = (cause >> 2) & 0x1F;
  pocketlm::firmware::FaultLine line;
  line.put("error: ").put(cause_name(code)).put(" (ExcCode ").dec(code).put(") at EPC ").hex(epc);
  line.put(" (FCSR ").hex(fcsr).put(")");
  if (cause & (1u << 31)) line.put(", in a branch delay slot");  // Cause.BD: EPC is the branch
  if (code >= 1 && code <= 5) line.put(", address ").hex(bad_address);  // TLB and address errors
  line.put("\n");
  mips_psp_uhi(kUhiWrite, 1, reinterpret_cast<long>(line.text), static_cast<long>(line.length));
  mips_psp_uhi(kUhiExit, 1, 0, 0);
  for (;;) {
  }
}
