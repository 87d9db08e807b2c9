/* The machine description gcc's soft-fp (libgcc/soft-fp, from Debian's gcc-12-source, built by
   CMakeLists.txt) asks of a target: here any 32-bit little-endian one. Soft-fp gives the IEEE
   754 single and double operations the compiler calls where the FPU has none: every double on
   a single-precision FPU (the PSP's Allegrex, and the stand-in -msingle-float MIPS32) and on
   the Xtensa LX7, whose FP option has single precision only, and single-precision division on
   the LX7 (LLVM calls __divsf3 there). Round to nearest even; the trapping exceptions go to the
   board (below). */
#define _FP_W_TYPE_SIZE 32
#define _FP_W_TYPE unsigned int
#define _FP_WS_TYPE signed int
#define _FP_I_TYPE int

#define _FP_MUL_MEAT_S(R, X, Y) _FP_MUL_MEAT_1_wide(_FP_WFRACBITS_S, R, X, Y, umul_ppmm)
#define _FP_MUL_MEAT_D(R, X, Y) _FP_MUL_MEAT_2_wide(_FP_WFRACBITS_D, R, X, Y, umul_ppmm)
#define _FP_DIV_MEAT_S(R, X, Y) _FP_DIV_MEAT_1_udiv_norm(S, R, X, Y)
#define _FP_DIV_MEAT_D(R, X, Y) _FP_DIV_MEAT_2_udiv(D, R, X, Y)

/* The default quiet NaN, as IEEE 754-2008 encodes it (quiet bit set), positive. */
#define _FP_NANFRAC_S _FP_QNANBIT_S
#define _FP_NANFRAC_D _FP_QNANBIT_D, 0
#define _FP_NANSIGN_S 0
#define _FP_NANSIGN_D 0
#define _FP_KEEPNANFRACP 1
#define _FP_QNANNEGATEDP 0
/* Soft-fp asks for a choice only when both operands are NaNs: the first operand's, as x86
   and Arm return it. */
#define _FP_CHOOSENAN(fs, wc, R, X, Y, OP) \
  do {                                     \
    R##_s = X##_s;                         \
    _FP_FRAC_COPY_##wc(R, X);              \
    R##_c = FP_CLS_NAN;                    \
  } while (0)

#define _FP_TININESS_AFTER_ROUNDING 0

/* The exceptions a PSP's FPU would trap on, as board.h numbers its FP flags, raised through the
   board (pocketlm_soft_fp_raise: on the Xtensa LX7 into FSR, where float division is software
   and the firmware's flag check must still see a 1/0; a weak no-op elsewhere, int64.c). Underflow
   and inexact are not tracked (0: soft-fp then spends nothing on them). */
#define FP_EX_INVALID 1
#define FP_EX_DIVZERO 2
#define FP_EX_OVERFLOW 4
void pocketlm_soft_fp_raise(int flags);
#define FP_HANDLE_EXCEPTIONS   \
  do {                         \
    if (_fex) pocketlm_soft_fp_raise(_fex); \
  } while (0)

#define __LITTLE_ENDIAN 1234
#define __BIG_ENDIAN 4321
#define __BYTE_ORDER __LITTLE_ENDIAN

/* The primitives soft-fp would take from longlong.h, in plain C: two-word addition and
   subtraction with carry, a 32 x 32 -> 64 product (the compiler's, or int64.c's __muldi3) and a
   64 / 32 division whose quotient fits 32 bits. */
#define add_ssaaaa(sh, sl, ah, al, bh, bl)                 \
  do {                                                     \
    unsigned int __sl = (unsigned int)(al) + (unsigned int)(bl); \
    (sh) = (unsigned int)(ah) + (unsigned int)(bh) + (__sl < (unsigned int)(al)); \
    (sl) = __sl;                                           \
  } while (0)
#define sub_ddmmss(sh, sl, ah, al, bh, bl)                 \
  do {                                                     \
    unsigned int __al = (unsigned int)(al);                \
    unsigned int __sl = __al - (unsigned int)(bl);         \
    (sh) = (unsigned int)(ah) - (unsigned int)(bh) - (__sl > __al); \
    (sl) = __sl;                                           \
  } while (0)
#define umul_ppmm(ph, pl, m0, m1)                                              \
  do {                                                                         \
    unsigned long long __p = (unsigned long long)(m0) * (unsigned long long)(m1); \
    (ph) = (unsigned int)(__p >> 32);                                          \
    (pl) = (unsigned int)__p;                                                  \
  } while (0)
/* (n1, n0) / d with d normalized (its top bit set: soft-fp shifts the divisor so before every
   division) and n1 < d: two 16-bit quotient digits, each estimated from the top half of d by the
   CPU's 32-bit division and corrected at most twice (Knuth's algorithm D for two digits). A
   64-bit division through int64.c's shift loop would cost about 1,000 instructions. */
static inline void pocketlm_udiv_qrnnd(unsigned int *q, unsigned int *r, unsigned int n1, unsigned int n0,
                                       unsigned int d) {
  const unsigned int dh = d >> 16, dl = d & 0xFFFFu;
  unsigned int q1 = n1 / dh, r1 = n1 - q1 * dh, m = q1 * dl;
  r1 = (r1 << 16) | (n0 >> 16);
  if (r1 < m) {
    --q1;
    r1 += d;
    if (r1 >= d && r1 < m) { /* no carry out of r1 + d: one more */
      --q1;
      r1 += d;
    }
  }
  r1 -= m;
  unsigned int q0 = r1 / dh, r0 = r1 - q0 * dh;
  m = q0 * dl;
  r0 = (r0 << 16) | (n0 & 0xFFFFu);
  if (r0 < m) {
    --q0;
    r0 += d;
    if (r0 >= d && r0 < m) {
      --q0;
      r0 += d;
    }
  }
  *q = (q1 << 16) | q0;
  *r = r0 - m;
}
#define udiv_qrnnd(q, r, n1, n0, d)                                      \
  do {                                                                   \
    unsigned int __q, __r;                                               \
    pocketlm_udiv_qrnnd(&__q, &__r, (unsigned int)(n1), (unsigned int)(n0), (unsigned int)(d)); \
    (q) = __q;                                                           \
    (r) = __r;                                                           \
  } while (0)

/* eqdf2.c and its kin give one function two names (__eqdf2 and __nedf2, ...). */
#define strong_alias(name, aliasname) _strong_alias(name, aliasname)
#define _strong_alias(name, aliasname) extern __typeof(name) aliasname __attribute__((alias(#name)));

/* Soft-fp's unreachable cases call abort() (cxx_runtime.cpp), which it does not declare. */
void abort(void);
