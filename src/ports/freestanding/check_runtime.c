/* The runtime's soft-fp and 64-bit helpers, compiled for the host under t_ names, against the
   host's own arithmetic, bit for bit (scripts/ports/check-freestanding-runtime builds and runs
   it). Operands: random bit patterns (subnormals, infinities and NaNs among them), values near
   1, and integers of every width. A NaN result must be a NaN; its payload is not compared. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
double t_adddf3(double, double), t_subdf3(double, double), t_muldf3(double, double), t_divdf3(double, double);
double t_extendsfdf2(float);
float t_truncdfsf2(double);
double t_floatundidf(uint64_t);
double t_floatsidf(int);
uint64_t t_fixunsdfdi(double);
int t_fixdfsi(double);
int t_gedf2(double, double), t_ledf2(double, double), t_eqdf2(double, double), t_unorddf2(double, double);
float t_divsf3(float, float);
float t_floatdisf(int64_t);
int64_t t_fixsfdi(float);
float t_floatundisf(uint64_t);
uint64_t t_fixunssfdi(float);
uint64_t t_udivdi3(uint64_t, uint64_t), t_umoddi3(uint64_t, uint64_t);
int64_t t_divdi3(int64_t, int64_t), t_moddi3(int64_t, int64_t), t_muldi3(int64_t, int64_t);
static uint64_t s = 88172645463325252ull;
static uint64_t rnd() {
  s ^= s << 13;
  s ^= s >> 7;
  s ^= s << 17;
  return s;
}
static double rd() {
  uint64_t b = rnd();
  int k = rnd() % 8;
  if (k == 0) {
    b &= 0x800fffffffffffffull;
    b |= (uint64_t)(1023 + (int)(rnd() % 64) - 32) << 52;
  } else if (k == 1) {
    b &= 0x800fffffffffffffull;
  }
  double d;
  memcpy(&d, &b, 8);
  return d;
}
static float rf() {
  uint32_t b = (uint32_t)rnd();
  if (rnd() % 4 == 0) {
    b &= 0x807fffffu;
    b |= (uint32_t)(127 + (int)(rnd() % 40) - 20) << 23;
  }
  float f;
  memcpy(&f, &b, 4);
  return f;
}
static int same(double a, double b) {
  if (isnan(a) && isnan(b)) return 1;
  return memcmp(&a, &b, 8) == 0;
}
static int samef(float a, float b) {
  if (isnan(a) && isnan(b)) return 1;
  return memcmp(&a, &b, 4) == 0;
}
int main(void) {
  long bad = 0;
  for (int i = 0; i < 3000000; i++) {
    double a = rd(), b = rd();
    bad += !same(t_adddf3(a, b), a + b);
    bad += !same(t_subdf3(a, b), a - b);
    bad += !same(t_muldf3(a, b), a * b);
    bad += !same(t_divdf3(a, b), a / b);
    float f = rf(), g = rf();
    bad += !same(t_extendsfdf2(f), (double)f);
    bad += !samef(t_truncdfsf2(a), (float)a);
    bad += !samef(t_divsf3(f, g), f / g);
    uint64_t u = rnd() >> (rnd() % 64);
    bad += !same(t_floatundidf(u), (double)u);
    bad += !samef(t_floatundisf(u), (float)u);
    bad += !samef(t_floatdisf((int64_t)u), (float)(int64_t)u);
    int si = (int)rnd();
    bad += !same(t_floatsidf(si), (double)si);
    if (!isnan(a) && !isnan(b)) {
      bad += (t_gedf2(a, b) >= 0) != (a >= b);
      bad += (t_ledf2(a, b) <= 0) != (a <= b);
      bad += (t_eqdf2(a, b) == 0) != (a == b);
    } else
      bad += !t_unorddf2(a, b);
    double c = (double)(rnd() >> (rnd() % 64)) * ((rnd() & 1) ? 0.75 : 1.0);
    if (c < 1.8e19) bad += t_fixunsdfdi(c) != (uint64_t)c;
    double e = rd();
    if (fabs(e) < 2e9) bad += t_fixdfsi(e) != (int)e;
    float h = rf();
    if (fabsf(h) < 9e18f) bad += t_fixsfdi(h) != (int64_t)h;
    if (h >= 0 && h < 1.8e19f) bad += t_fixunssfdi(h) != (uint64_t)h;
    uint64_t n = rnd() >> (rnd() % 64), d = rnd() >> (rnd() % 64);
    if (d) {
      bad += t_udivdi3(n, d) != n / d;
      bad += t_umoddi3(n, d) != n % d;
      int64_t sn = (int64_t)rnd() >> (rnd() % 63), sd = (int64_t)rnd() >> (rnd() % 63);
      if (sd && !(sn == INT64_MIN && sd == -1)) {
        bad += t_divdi3(sn, sd) != sn / sd;
        bad += t_moddi3(sn, sd) != sn % sd;
      }
    }
    int64_t x = (int64_t)rnd(), y = (int64_t)rnd();
    bad += t_muldi3(x, y) != (int64_t)((uint64_t)x * (uint64_t)y);
    if (bad) {
      printf("mismatch in case %d (a=%a b=%a)\n", i, a, b);
      return 1;
    }
  }
  printf("3000000 cases, all equal to the host's arithmetic\n");
  return 0;
}
