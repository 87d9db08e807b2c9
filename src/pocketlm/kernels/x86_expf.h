// expf over an array with AVX2 + FMA, bit for bit the C library's expf where that is glibc's
// __expf_fma (x86-64 glibc 2.28 onwards picks it when the CPU has FMA and AVX2). The avx2 and
// avxvnni tables install it in their `exp` slot only after checking it against this process's
// expf (exp_fma_matches), so that the slot stays exact on any other libm. Declarations only
// (no intrinsics): the tests call them too. Compiled on x86-64 only (POCKETLM_HAVE_AVX2).
#pragma once

#include "pocketlm/kernels/kernels.h"

namespace pocketlm::x86 {

// x[i] = expf(x[i]) for i < n, in place, with glibc's __expf_fma arithmetic 8 floats at a time;
// lanes in glibc's special range (|x| >= 88, inf, NaN) and the n % 8 tail call std::exp. The
// CPU must have AVX2 and FMA.
void exp_fma(float* x, int n);

// Whether exp_fma gives the bits of scalar(x) for every probe input: a few thousand values
// across [-104, 89], the special values, and inputs where the same algorithm without fused
// multiply-adds rounds differently (see x86_expf.cpp). The CPU must have AVX2 and FMA.
bool exp_fma_matches(float (*scalar)(float));

// The kernel table's exp slot on an AVX2 CPU: exp_fma when the CPU has FMA and
// exp_fma_matches(std::exp) (decided once per process, thread-safe), else reference::exp.
ExpFn select_exp();

}  // namespace pocketlm::x86
