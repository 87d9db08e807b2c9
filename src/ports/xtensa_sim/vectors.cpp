// Reset entry and vectors of the Xtensa LX7 image (QEMU's `-M sim -cpu de233_fpu`). Written as
// top-level asm in a C++ file so that clang's integrated assembler sees the toolchain's
// -target-feature list (the clang driver passes none of it to a .S file), which the privileged
// instructions need (wsr.vecbase, rfwo, l32e/s32e).
//
// The core has relocatable vectors (XCHAL_HAVE_VECBASE, reset VECBASE 0x2000); the linker script
// places .vectors at 0x2000 and the reset code writes VECBASE anyway, so the layout does not depend
// on the reset value. Offsets from VECBASE are the core's (core-isa.h XCHAL_*_VECOFS).
//
// Windowed ABI: every frame's a0-a3 are spilled to the 16 bytes below the stack pointer of the
// frame it called (the base save area); call8/call12 frames put a4-a7/a4-a11 into the extra save
// area just below their caller's base save area, found through that area's copy of the caller's a1.
#include <cstdint>

asm(R"(
  .section .vectors, "ax"
  .global xtensa_vectors
  .balign 1024
xtensa_vectors:
  /* +0x00 window overflow, call4 frame */
  s32e a0, a5, -16
  s32e a1, a5, -12
  s32e a2, a5, -8
  s32e a3, a5, -4
  rfwo
  .org xtensa_vectors + 0x40
  /* +0x40 window underflow, call4 frame */
.Lunderflow4:
  l32e a0, a5, -16
  l32e a1, a5, -12
  l32e a2, a5, -8
  l32e a3, a5, -4
  rfwu
  .org xtensa_vectors + 0x80
  /* +0x80 window overflow, call8 frame: a0 finds the extra save area through the caller's sp */
  s32e a0, a9, -16
  l32e a0, a1, -12
  s32e a1, a9, -12
  s32e a2, a9, -8
  s32e a3, a9, -4
  s32e a4, a0, -32
  s32e a5, a0, -28
  s32e a6, a0, -24
  s32e a7, a0, -20
  rfwo
  .org xtensa_vectors + 0xc0
  /* +0xc0 window underflow, call8 frame */
.Lunderflow8:
  l32e a1, a9, -12
  l32e a0, a9, -16
  l32e a7, a1, -12
  l32e a2, a9, -8
  l32e a4, a7, -32
  l32e a3, a9, -4
  l32e a5, a7, -28
  l32e a6, a7, -24
  l32e a7, a7, -20
  rfwu
  .org xtensa_vectors + 0x100
  /* +0x100 window overflow, call12 frame */
  s32e a0, a13, -16
  l32e a0, a1, -12
  s32e a1, a13, -12
  s32e a2, a13, -8
  s32e a3, a13, -4
  s32e a4, a0, -48
  s32e a5, a0, -44
  s32e a6, a0, -40
  s32e a7, a0, -36
  s32e a8, a0, -32
  s32e a9, a0, -28
  s32e a10, a0, -24
  s32e a11, a0, -20
  rfwo
  .org xtensa_vectors + 0x140
  /* +0x140 window underflow, call12 frame */
.Lunderflow12:
  l32e a1, a13, -12
  l32e a0, a13, -16
  l32e a11, a1, -12
  l32e a2, a13, -8
  l32e a4, a11, -48
  l32e a8, a11, -32
  l32e a3, a13, -4
  l32e a5, a11, -44
  l32e a6, a11, -40
  l32e a7, a11, -36
  l32e a9, a11, -28
  l32e a10, a11, -24
  l32e a11, a11, -20
  rfwu
  /* Interrupt levels 2-7 and debug: interrupts stay disabled (INTENABLE 0), but a stray one
     ends the run rather than running into the next vector. */
  .org xtensa_vectors + 0x180
  movi a2, 4
  j xtensa_fatal_entry
  .org xtensa_vectors + 0x1c0
  movi a2, 4
  j xtensa_fatal_entry
  .org xtensa_vectors + 0x200
  movi a2, 4
  j xtensa_fatal_entry
  .org xtensa_vectors + 0x240
  movi a2, 4
  j xtensa_fatal_entry
  .org xtensa_vectors + 0x280
  movi a2, 4
  j xtensa_fatal_entry
  .org xtensa_vectors + 0x2c0
  movi a2, 4
  j xtensa_fatal_entry
  /* +0x300 kernel exception (PS.UM 0), +0x340 user exception (PS.UM 1, how the program runs),
     +0x3c0 double exception (an exception while PS.EXCM is set: the PC is in DEPC). */
  .org xtensa_vectors + 0x300
  movi a2, 1
  j xtensa_fatal_entry
  .org xtensa_vectors + 0x340
  wsr a0, excsave1
  rsr a0, exccause
  beqi a0, 5, .Lalloca
  movi a2, 0
  j xtensa_fatal_entry
  /* Alloca (EXCCAUSE 5): a MOVSP whose caller's registers are spilled (LLVM moves a1 with movsp
     around calls that pass arguments on the stack). The caller's base save area sits below the
     old sp and would be left behind, so the caller's registers are brought back into the register
     file instead, by running the window underflow handler for its frame, and the MOVSP is retried.
     The handler is entered as an underflow would enter it: the window rotated down to the caller
     (by its call size, the top two bits of this frame's a0) and PS.OWB set to this frame, to which
     rfwu returns. */
.Lalloca:
  rsr a0, windowbase
  rotw -1                 /* this frame's a0-a3 are now a4-a7; a0-a3 are the spilled caller's */
  rsr a2, ps
  /* PS.OWB := WINDOWBASE of the faulting frame (now in a4) */
  extui a3, a2, 8, 4
  xor a3, a3, a4
  slli a3, a3, 8
  xor a2, a2, a3
  wsr a2, ps
  rsync
  /* this frame's a0 back: its return address holds the caller's call size */
  rsr a4, excsave1
  bbsi a4, 31, 1f
  j .Lunderflow4           /* call4 */
1:rotw -1
  bbsi a8, 30, 2f
  j .Lunderflow8           /* call8 */
2:rotw -1
  j .Lunderflow12          /* call12 */
  .org xtensa_vectors + 0x3c0
  movi a2, 2
  j xtensa_fatal_entry
  .org xtensa_vectors + 0x400

  /* The reset vector (XCHAL_RESET_VECTOR0_VADDR, in the sim machine's ROM): QEMU resets the CPU
     after loading the ELF, so the run starts here, not at the ELF's entry. */
  .section .reset_vector, "ax"
  j 1f
  .balign 4
2:.long _start
1:l32r a2, 2b
  jx a2

  /* The literals of the code below, in a section the linker script puts just before it (l32r
     reads only backwards; GNU ld, not llvm-mc, resolves the l32r: xtensa-clang says why). */
  .section .literal.xtensa_start, "ax"
  .balign 4
.Lstack_top:      .long __stack_top
.Lexc_stack_top:  .long __exception_stack_top
.Lvectors:        .long xtensa_vectors
.Lreset:          .long xtensa_reset
.Lfatal:          .long xtensa_fatal
  .section .text.xtensa_start, "ax"
  .global _start
_start:
  /* Reset leaves PS.EXCM set and PS.WOE clear, WINDOWSTART 1, WINDOWBASE 0. */
  movi a0, 0
  l32r a1, .Lstack_top
  l32r a2, .Lvectors
  wsr a2, vecbase
  /* CPENABLE bit 0: the FPU (coprocessor 0) usable; without it every FP op is
     Coprocessor0Disabled. */
  movi a2, 1
  wsr a2, cpenable
  /* PS: WOE (bit 18) for window overflow exceptions, UM (bit 5) so exceptions go to the user
     vector, EXCM 0, INTLEVEL 0 (no interrupt is enabled). */
  movi a2, 1
  slli a2, a2, 18
  addi a2, a2, 0x20
  wsr a2, ps
  rsync
  /* call4, not call8: if this first frame is ever spilled, the call4 overflow handler writes
     only its base save area below the callee's sp, never an extra save area through a caller's
     sp that does not exist. */
  l32r a4, .Lreset
  callx4 a4
1:j 1b

  /* Every fatal exception or interrupt: a2 says which vector (0 user, 1 kernel, 2 double,
     4 interrupt). The interrupted frames are abandoned: WINDOWSTART keeps only the current
     frame, the stack is a spare one, and the reporter runs with EXCM clear so that its own
     window overflows are ordinary. */
xtensa_fatal_entry:
  rsr a3, exccause
  rsr a4, epc1
  bnei a2, 2, 1f
  rsr a4, depc
1:rsr a5, excvaddr
  rsr a6, windowbase
  movi a7, 1
  ssl a6
  sll a7, a7
  wsr a7, windowstart
  rsync
  l32r a1, .Lexc_stack_top
  movi a7, 1
  slli a7, a7, 18
  addi a7, a7, 0x20
  wsr a7, ps
  rsync
  mov a9, a5
  mov a8, a4
  mov a7, a3
  mov a6, a2
  l32r a2, .Lfatal
  callx4 a2
1:j 1b
)");
