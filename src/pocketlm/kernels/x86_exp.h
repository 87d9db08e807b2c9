// glibc's __expf_fma in vectors, written once over a vector width V (kernels/x86_vec256.h,
// x86_vec512.h: their expf members) and instantiated by kernels/x86_expf_fma.cpp and
// x86_expf_avx512.cpp, each compiled for its own instruction set (one template cannot carry a
// per-width target attribute). The arithmetic, operation for operation as this machine's
// libm.so.6 (glibc 2.36) disassembles, in double precision (kernels/x86_expf.h):
//   xd = (double)x
//   kd = fma(InvLn2N, xd, Shift)        ki = bits(kd)     kd = kd - Shift
//   r  = fma(InvLn2N, xd, -kd)          (r in [-1/2, 1/2]: x * 32/ln2 = k + r)
//   s  = asdouble(T[ki % 32] + (ki << 47))                = 2^(k/32)
//   z  = fma(r, C0, C1)    r2 = r * r    y = fma(r, C2, 1.0)    y = fma(z, r2, y)
//   expf(x) = (float)(y * s)            (one rounding to nearest)
// glibc sends |x| >= 88 (abstop = bits(x) >> 20 & 0x7ff above 0x42a), infinities and NaNs to a
// special path; a vector with any lane there computes those lanes with std::exp, exact by
// construction. The fused multiply-adds matter: without them 2 inputs in [-104, 89] round
// differently (x86_expf.cpp).
// Included by those two files only: everything here has internal linkage.
#pragma once

#include <cmath>
#include <cstdint>

#include "pocketlm/base/order_free_sum.h"

namespace pocketlm {
namespace {  // NOLINT(google-build-namespaces): one copy per width's file

// T[i] = bits(2^(i/32) as a double) - (i << 47), i < 32: adding ki << 47 (ki = k + 32 * m in
// the low bits of kd) puts m into the exponent field, so that s = 2^(k/32) exactly as glibc's
// __exp2f_data.tab (EXP2F_TABLE_BITS = 5).
alignas(64) constexpr std::int64_t kExpTable[32] = {
    0x3ff0000000000000, 0x3fefd9b0d3158574, 0x3fefb5586cf9890f, 0x3fef9301d0125b51,
    0x3fef72b83c7d517b, 0x3fef54873168b9aa, 0x3fef387a6e756238, 0x3fef1e9df51fdee1,
    0x3fef06fe0a31b715, 0x3feef1a7373aa9cb, 0x3feedea64c123422, 0x3feece086061892d,
    0x3feebfdad5362a27, 0x3feeb42b569d4f82, 0x3feeab07dd485429, 0x3feea47eb03a5585,
    0x3feea09e667f3bcd, 0x3fee9f75e8ec5f74, 0x3feea11473eb0187, 0x3feea589994cce13,
    0x3feeace5422aa0db, 0x3feeb737b0cdc5e5, 0x3feec49182a3f090, 0x3feed503b23e255d,
    0x3feee89f995ad3ad, 0x3feeff76f2fb5e47, 0x3fef199bdd85529c, 0x3fef3720dcef9069,
    0x3fef5818dcfba487, 0x3fef7c97337b9b5f, 0x3fefa4afa2a490da, 0x3fefd0765b6e4540,
};
constexpr double kInvLn2N = 0x1.71547652b82fep+5;  // 32 / ln 2 (__exp2f_data.invln2_scaled)
constexpr double kShift = 0x1.8p+52;               // kd + Shift rounds kd to an integer
// 2^(r/32) ~= C0 r^3 + C1 r^2 + C2 r + 1: glibc's exp2f polynomial (__exp2f_data.poly) with
// coefficient i scaled by 1/32^(3-i) (__exp2f_data.poly_scaled).
constexpr double kC0 = 0x1.c6af84b912394p-20;
constexpr double kC1 = 0x1.ebfce50fac4f3p-13;
constexpr double kC2 = 0x1.62e42ff0c52d6p-6;
// bits(x) & 0x7fffffff above this: glibc's special path (abstop > 0x42a, i.e. |x| >= 88, inf, NaN).
constexpr std::int32_t kSpecialAbove = 0x42afffff;

// The main path for V::kLanes / 2 values widened to double.
template <class V>
inline typename V::D exp_half(typename V::D xd, const typename V::ExpTable& table) {
  const typename V::D inv_ln2n = V::splat_d(kInvLn2N), shift = V::splat_d(kShift);
  typename V::D kd = V::fmadd_d(inv_ln2n, xd, shift);
  const typename V::L ki = V::bits_d(kd);
  kd = V::sub_d(kd, shift);
  const typename V::D r = V::fmsub_d(inv_ln2n, xd, kd);
  const typename V::D s = V::from_bits_d(V::add_l(table.lookup(ki), V::shift_left47(ki)));
  const typename V::D z = V::fmadd_d(r, V::splat_d(kC0), V::splat_d(kC1));
  const typename V::D r2 = V::mul_d(r, r);
  typename V::D y = V::fmadd_d(r, V::splat_d(kC2), V::splat_d(1.0));
  y = V::fmadd_d(z, r2, y);
  return V::mul_d(y, s);  // narrowed to float by round to nearest, as vcvtsd2ss
}

// out[j] = std::exp(in[j]) for the lanes j set in `mask` (glibc's special path); out of line,
// so that the main loop keeps its constants in registers.
template <class V>
__attribute__((noinline, cold)) void exp_special_lanes(float* out, typename V::F in, unsigned mask) {
  float v[V::kLanes];
  V::storef(v, in);
  for (int j = 0; j < V::kLanes; ++j)
    if (mask & (1u << j)) out[j] = std::exp(v[j]);
}

// V::kLanes values in place: the main path for all, then std::exp for the lanes in the special
// range. Returns the results.
template <class V>
inline typename V::F exp_lanes(float* x, const typename V::ExpTable& table) {
  const typename V::F v = V::loadf(x);
  const typename V::F y = V::narrow(exp_half<V>(V::widen_lo(v), table), exp_half<V>(V::widen_hi(v), table));
  V::storef(x, y);
  if (const unsigned mask = V::abs_bits_above(v, kSpecialAbove)) {
    exp_special_lanes<V>(x, v, mask);
    return V::loadf(x);
  }
  return y;
}

// Adds the V::kLanes values of v to the running sum on grid g in any order
// (base/order_free_sum.h), if that gives the sequential sum's bits: every q = v / u in
// [0, 2^22) and not a tie, and the total below the binade's end. Then g->steps has advanced;
// else nothing changed.
template <class V>
inline bool add_order_free(SumGrid* g, typename V::F v, typename V::F to_steps) {
  const typename V::F q = V::mul(v, to_steps);  // exact: a power-of-two scale
  std::int32_t total = 0;
  if (!V::whole_steps(q, SumGrid::kFits, &total)) return false;
  if (g->steps + total >= SumGrid::kEnd) return false;
  g->steps += total;
  return true;
}

// x[i] = expf(x[i]) for i < n; the n % V::kLanes tail with std::exp.
template <class V>
void exp_array(float* x, int n) {
  const typename V::ExpTable table(kExpTable);
  int i = 0;
  for (; i + V::kLanes <= n; i += V::kLanes) exp_lanes<V>(x + i, table);
  for (; i < n; ++i) x[i] = std::exp(x[i]);
}

// exp_sum: x - max and a vector step of expf; the step's values are added to the sum at once
// where their order cannot change it (add_order_free: no chain of dependent additions), else
// one by one in index order (where the sum crosses a power of two, and while it is below
// 2^-103, e.g. before the first large term).
template <class V>
float exp_sum_array(float* x, int n, float max) {
  const typename V::ExpTable table(kExpTable);
  const typename V::F m = V::splat_f(max);
  float sum = 0.0f;
  SumGrid g{};
  bool on_grid = false;  // g holds the sum (and `sum` is stale)
  typename V::F to_steps = V::zero_f();
  int i = 0;
  for (; i + V::kLanes <= n; i += V::kLanes) {
    V::storef(x + i, V::sub_f(V::loadf(x + i), m));
    const typename V::F y = exp_lanes<V>(x + i, table);
    if (on_grid && add_order_free<V>(&g, y, to_steps)) continue;
    if (on_grid) sum = g.value();
    for (int j = i; j < i + V::kLanes; ++j) sum += x[j];
    on_grid = SumGrid::of(sum, &g);
    to_steps = V::splat_f(g.to_steps);
  }
  if (on_grid) sum = g.value();
  for (; i < n; ++i) {
    x[i] = std::exp(x[i] - max);
    sum += x[i];
  }
  return sum;
}

}  // namespace
}  // namespace pocketlm
