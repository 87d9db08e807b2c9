/* Reset and exception entry for the MIPS32 image laid out as a PSP (QEMU's Malta board, -cpu 24Kf).
   QEMU's Malta bootloader jumps to _start (the ELF entry) in kernel mode; nothing of its set-up
   is relied on: Status, EBase, Cause, FCR31 and the stack are set here. QEMU loads .text, .rodata
   and .data at their link addresses from the ELF, so no .data copy is needed; .bss is zeroed. */
#define CP0_STATUS   $12
#define CP0_CAUSE    $13
#define CP0_EPC      $14
#define CP0_EBASE    $15, 1
#define CP0_BADVADDR $8

/* Status: CU1 (bit 29) enables the FPU. FR (bit 26) stays 0: -msingle-float -mfp32 code uses the
   32 single registers of the FR=0 model. BEV (22), ERL (2), EXL (1) and IE (0) cleared, KSU 0:
   kernel mode without interrupts, exceptions through EBase + 0x180. */
#define STATUS_RUN   0x20000000

	.set noreorder
	.set noat

/* The exception vectors (BEV=0, EBase 0x80000000; the linker script places them): TLB refill at
   EBase + 0x000, taken by any access to a mapped address without a TLB entry, a null pointer's
   among them (this program uses no TLB), and the general exception at EBase + 0x180. Each only
   jumps to the handler, which lives with the code. */
	.section .vectors.refill, "ax"
	.globl mips_psp_refill_vector
mips_psp_refill_vector:
	la	$k0, mips_psp_exception_entry
	jr	$k0
	nop

	.section .vectors.general, "ax"
	.globl mips_psp_general_vector
mips_psp_general_vector:
	la	$k0, mips_psp_exception_entry
	jr	$k0
	nop

	.section .text.reset, "ax"
	.globl _start
	.type _start, @function
_start:
	li	$t0, STATUS_RUN
	mtc0	$t0, CP0_STATUS
	/* EBase: the 24Kf's reset value, written because the exception vector's address depends on it. */
	li	$t0, 0x80000000
	mtc0	$t0, CP0_EBASE
	/* Cause.DC (bit 27) 0: Count runs (the instruction clock). */
	mtc0	$zero, CP0_CAUSE
	.set push
	.set mips32r2
	ehb
	.set pop
	/* FCR31 = 0 (no traps, round to nearest, no flush) until arm_fp_traps() sets the PSP's 0x0E00. */
	ctc1	$zero, $31
	la	$sp, __stack_top
	la	$t0, __bss_start
	la	$t1, __bss_end
	beq	$t0, $t1, 2f
	nop
1:	sw	$zero, 0($t0)
	addiu	$t0, $t0, 4
	bne	$t0, $t1, 1b
	nop
2:	jal	mips_psp_start   /* startup.cpp: paints the stack, runs constructors, main(), _exit */
	nop
3:	b	3b
	nop
	.size _start, . - _start

/* Any exception: the program cannot continue (no interrupts are enabled, no TLB is used). The
   report runs on its own stack, so that a stack overflow is reported too. */
	.text
	.globl mips_psp_exception_entry
	.type mips_psp_exception_entry, @function
mips_psp_exception_entry:
	la	$sp, __exception_stack_top
	mfc0	$a0, CP0_CAUSE
	mfc0	$a1, CP0_EPC
	cfc1	$a2, $31
	/* Traps off: the handler's code must not take the same FP trap again. */
	ctc1	$zero, $31
	mfc0	$a3, CP0_BADVADDR
	jal	mips_psp_exception       /* startup.cpp: prints the line, exits with 1 */
	nop
4:	b	4b
	nop
	.size mips_psp_exception_entry, . - mips_psp_exception_entry
