// Choosing and checking the vector expf (x86_expf.h): the kernels themselves are
// kernels/x86_exp.h written once over a vector width, instantiated in x86_expf_fma.cpp
// (AVX2 + FMA) and x86_expf_avx512.cpp; here the probe that checks one against this process's
// expf bit for bit, and the once-per-process choice. No intrinsics: compiled for the baseline.
#include "pocketlm/kernels/x86_expf.h"

#include <bit>
#include <cfenv>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "pocketlm/kernels/reference.h"

namespace pocketlm::x86 {

namespace {

// Inputs where the algorithm without fused multiply-adds (each fma a multiply then an add,
// compiled with -ffp-contract=off) gives a float other than this machine's expf: a one-off
// search over every float in [-104, 89] (2,237,661,184 of them on the main path) found these
// two; with the fusions the model matched expf on all of them.
constexpr std::uint32_t kFusedOnly[] = {
    0x4202422f,  // 0x1.04845ep+5:   expf 0x1.f93e38p+46, unfused 0x1.f93e36p+46
    0xc27c65d9,  // -0x1.f8cbb2p+5:  expf 0x1.f45326p-92, unfused 0x1.f45324p-92
};

// glibc's branch points and the values around them, the ends of the float range, subnormals
// and non-finite values (24: the probe pads them to whole 16-lane vectors).
constexpr std::uint32_t kEdges[] = {
    0x42b00000,  // 88: the first special value
    0x42afffff,  // just below 88: main path
    0xc2b00000,  // -88
    0xc2afffff,  // just above -88
    0x42b17217,  // 0x1.62e42ep6 = 88.72283: largest finite expf
    0x42b17218,  // just above: overflows to inf
    0xc2aeac4f,  // -87.33654: expf is the smallest normal float around here
    0xc2ce8ecf,  // -0x1.9d1d9ep6 = -103.27892 (log 2^-149)
    0xc2ce8ed0,
    0xc2cff1b4,  // -0x1.9fe368p6 = -103.97208 (log 2^-150)
    0xc2cff1b5,  // below: underflows to 0
    0x00000000, 0x80000000,  // +-0
    0x00000001, 0x80000001,  // smallest subnormals
    0x007fffff, 0x00800000,  // largest subnormal, smallest normal
    0x7f800000, 0xff800000,  // +-inf
    0x7fc00000, 0xffc00000,  // quiet NaNs
    0x7f800001,              // a signalling NaN
    0x7f7fffff, 0xff7fffff,  // +-FLT_MAX
};

float from_bits(std::uint32_t u) { return std::bit_cast<float>(u); }

// kernel over in[0..n) against scalar, bit for bit.
constexpr int kProbeMax = 512;
bool probe(ExpFn kernel, const float* in, int n, float (*scalar)(float)) {
  float out[kProbeMax];
  if (n > kProbeMax) return false;
  std::memcpy(out, in, static_cast<std::size_t>(n) * sizeof(float));
  kernel(out, n);
  for (int i = 0; i < n; ++i) {
    const float want = scalar(in[i]);
    if (std::memcmp(&out[i], &want, sizeof(float)) != 0) return false;
  }
  return true;
}

float std_exp(float x) { return std::exp(x); }

}  // namespace

bool exp_kernel_matches(ExpFn kernel, float (*scalar)(float)) {
  float buf[kProbeMax];
  int n = 0;
  // The fused-only inputs (padded to a whole vector), then the edges.
  for (std::uint32_t u : kFusedOnly) buf[n++] = from_bits(u);
  while (n % 16 != 0) buf[n++] = 1.0f;  // (a whole vector of either kernel)
  for (std::uint32_t u : kEdges) buf[n++] = from_bits(u);
  while (n % 16 != 0) buf[n++] = 1.0f;  // the vector path, not the scalar tail
  if (!probe(kernel, buf, n, scalar)) return false;
  // 4,096 values evenly spaced over [-104, 89].
  constexpr int kSweep = 4096;
  for (int base = 0; base < kSweep; base += 256) {
    for (int i = 0; i < 256; ++i)
      buf[i] = static_cast<float>(-104.0 + 193.0 * static_cast<double>(base + i) / (kSweep - 1));
    if (!probe(kernel, buf, 256, scalar)) return false;
  }
  // Every binade from the subnormals up to 64, both signs (the sweep has few small values).
  n = 0;
  for (int e = -149; e <= 6; ++e) {
    buf[n++] = std::ldexp(1.3f, e);
    buf[n++] = -std::ldexp(1.7f, e);
  }
  while (n % 16 != 0) buf[n++] = 1.0f;
  return probe(kernel, buf, n, scalar);
}

namespace {

ExpFn choose_exp(ExpWidth width) {
  // The probe overflows and underflows on purpose (expf of any float): with the caller's traps
  // masked and its flags as they were afterwards, so that a process running with FP traps on
  // (tests/fp_trap_test.cpp, a PSP-like guard) is not stopped by a one-time CPU check.
  std::fenv_t caller;
  std::feholdexcept(&caller);
  const bool fma = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  const bool wide = width == ExpWidth::k512 && __builtin_cpu_supports("avx512f");
  ExpFn pick = reference::exp;
  if (fma && wide && exp_kernel_matches(exp_avx512, std_exp))
    pick = exp_avx512;
  else if (fma && exp_kernel_matches(exp_fma, std_exp))
    pick = exp_fma;
  std::fesetenv(&caller);
  return pick;
}

}  // namespace

ExpFn select_exp(ExpWidth width) {
  if (width == ExpWidth::k512) {  // probed only when a table of that width is built
    static const ExpFn wide = choose_exp(ExpWidth::k512);
    return wide;
  }
  static const ExpFn narrow = choose_exp(ExpWidth::k256);
  return narrow;
}

ExpSumFn select_exp_sum(ExpWidth width) {
  const ExpFn exp = select_exp(width);
  if (exp == exp_avx512) return exp_sum_avx512;
  return exp == exp_fma ? exp_sum_fma : reference::exp_sum;
}

}  // namespace pocketlm::x86
