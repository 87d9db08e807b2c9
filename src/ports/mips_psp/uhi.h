/* MIPS UHI semihosting (the Unified Hosting Interface, MD01069), as QEMU implements it with
   `-semihosting` (target/mips/tcg/sysemu/mips-semi.c): `sdbbp 1` with the operation in $25 (t9),
   arguments in $4-$6, the result in $2 and the host's errno in $3. C and C++ both include it. */
#ifndef POCKETLM_PORTS_MIPS_PSP_UHI_H
#define POCKETLM_PORTS_MIPS_PSP_UHI_H

enum {
  kUhiExit = 1,
  kUhiOpen = 2,
  kUhiClose = 3,
  kUhiRead = 4,
  kUhiWrite = 5,
  kUhiLseek = 6,
};

/* UHI's open flags (the values QEMU passes on to the host as GDB's). */
enum {
  kUhiOpenWrOnly = 0x1,
  kUhiOpenRdWr = 0x2,
  kUhiOpenAppend = 0x8,
  kUhiOpenCreat = 0x200,
  kUhiOpenTrunc = 0x400,
  kUhiOpenExcl = 0x800,
};

static inline long mips_psp_uhi(long op, long a0, long a1, long a2) {
  register long r_op __asm__("$25") = op;
  register long r_a0 __asm__("$4") = a0;
  register long r_a1 __asm__("$5") = a1;
  register long r_a2 __asm__("$6") = a2;
  register long r_v0 __asm__("$2");
  register long r_v1 __asm__("$3");
  /* The host reads and writes guest memory through the pointers: a full memory clobber. */
  __asm__ volatile("sdbbp 1" : "=r"(r_v0), "=r"(r_v1) : "r"(r_op), "r"(r_a0), "r"(r_a1), "r"(r_a2) : "memory");
  (void)r_v1;
  return r_v0;
}

#endif
