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

// The same, 16 floats at a time with AVX-512F registers of 8 doubles (n % 16 tail: std::exp).
// The CPU must have AVX-512F.
void exp_avx512(float* x, int n);

// Whether kernel (exp_fma or exp_avx512) gives the bits of scalar(x) for every probe input:
// a few thousand values across [-104, 89], the special values, and inputs where the same
// algorithm without fused multiply-adds rounds differently (see x86_expf.cpp). The CPU must
// have what the kernel needs.
bool exp_kernel_matches(ExpFn kernel, float (*scalar)(float));

// The vector registers a table's expf may use: a table stays inside its own instruction set, so
// that `--kernels avx2` on an AVX-512 CPU runs (and times) what an AVX2-only CPU would.
enum class ExpWidth { k256, k512 };

// A kernel table's exp slot, decided once per process and width (thread-safe): with AVX2 and
// FMA, exp_avx512 where the width is k512 and the CPU has AVX-512F, else exp_fma, the first
// that matches std::exp on the probe; else reference::exp.
ExpFn select_exp(ExpWidth width);

// The exp_sum slot (kernels.h) with exp_fma's or exp_avx512's arithmetic: each vector step's
// additions (in index order) run while the next step's expf is computed. Same CPU needs.
float exp_sum_fma(float* x, int n, float max);
float exp_sum_avx512(float* x, int n, float max);

// The exp_sum slot that goes with select_exp(width)'s choice (reference::exp_sum with
// reference::exp).
ExpSumFn select_exp_sum(ExpWidth width);

}  // namespace pocketlm::x86
