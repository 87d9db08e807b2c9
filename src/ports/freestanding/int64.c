/* The 64-bit integer helpers a 32-bit compiler calls (the names libgcc and compiler-rt give
   them): the engine's sizes and offsets are 64-bit, so its plans divide them. Shift-and-subtract
   division, one quotient bit a step: no 64-bit division or multiplication inside, which would
   call these again. LLVM's Xtensa backend also calls __muldi3 for a 64-bit product when the
   core has no MUL32_HIGH (QEMU's de233_fpu has none). */
#include <stdint.h>

uint64_t __udivmoddi4(uint64_t n, uint64_t d, uint64_t *rem) {
  if (d == 0) { /* as the hardware's division would: no trap on these cores; the engine never divides by 0 */
    if (rem) *rem = n;
    return ~(uint64_t)0;
  }
  uint64_t q = 0, r = 0;
  if ((n >> 32) == 0 && (d >> 32) == 0) { /* the common case: 32-bit operands, the CPU's own division */
    q = (uint32_t)n / (uint32_t)d;
    r = (uint32_t)n % (uint32_t)d;
  } else {
    for (int bit = 63; bit >= 0; --bit) {
      r = (r << 1) | ((n >> bit) & 1);
      if (r >= d) {
        r -= d;
        q |= (uint64_t)1 << bit;
      }
    }
  }
  if (rem) *rem = r;
  return q;
}

uint64_t __udivdi3(uint64_t n, uint64_t d) { return __udivmoddi4(n, d, 0); }

uint64_t __umoddi3(uint64_t n, uint64_t d) {
  uint64_t r;
  __udivmoddi4(n, d, &r);
  return r;
}

/* Signed: C's truncation toward zero; the remainder takes the dividend's sign. */
static uint64_t magnitude(int64_t v) { return v < 0 ? 0 - (uint64_t)v : (uint64_t)v; }

int64_t __divdi3(int64_t n, int64_t d) {
  const uint64_t q = __udivmoddi4(magnitude(n), magnitude(d), 0);
  return (int64_t)(((n < 0) != (d < 0)) ? 0 - q : q);
}

int64_t __moddi3(int64_t n, int64_t d) {
  uint64_t r;
  __udivmoddi4(magnitude(n), magnitude(d), &r);
  return (int64_t)(n < 0 ? 0 - r : r);
}

/* The low 64 bits of a product, from 16-bit halves (32 x 32 -> 32 products only). */
static uint64_t mul32x32(uint32_t a, uint32_t b) {
  const uint32_t al = a & 0xFFFF, ah = a >> 16, bl = b & 0xFFFF, bh = b >> 16;
  const uint32_t ll = al * bl, lh = al * bh, hl = ah * bl, hh = ah * bh;
  const uint32_t mid = (ll >> 16) + (lh & 0xFFFF) + (hl & 0xFFFF);
  const uint32_t lo = (ll & 0xFFFF) | (mid << 16);
  const uint32_t hi = hh + (lh >> 16) + (hl >> 16) + (mid >> 16);
  return ((uint64_t)hi << 32) | lo;
}

int64_t __muldi3(int64_t a, int64_t b) {
  const uint64_t x = (uint64_t)a, y = (uint64_t)b;
  const uint32_t xl = (uint32_t)x, xh = (uint32_t)(x >> 32), yl = (uint32_t)y, yh = (uint32_t)(y >> 32);
  const uint64_t low = mul32x32(xl, yl);
  const uint32_t cross = xl * yh + xh * yl;
  return (int64_t)(low + ((uint64_t)cross << 32));
}

/* Soft-fp's exception hook (sfp-machine.h): a board whose FPU flags the firmware checks while
   some float operations are software (the Xtensa LX7's division) defines it; elsewhere they are
   dropped, as soft doubles never reach a token's work (scripts/check-soft-double). */
__attribute__((weak)) void pocketlm_soft_fp_raise(int flags) { (void)flags; }
