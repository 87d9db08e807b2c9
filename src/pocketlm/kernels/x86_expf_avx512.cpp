// exp_avx512 and exp_sum_avx512 (kernels/x86_expf.h): kernels/x86_exp.h over 16 lanes
// (Vec512), compiled for AVX-512 (x86_expf.cpp's select_exp checks the CPU has it).
#include "pocketlm/kernels/x86_expf.h"
#include "pocketlm/kernels/x86_vec512.h"
#include "pocketlm/kernels/x86_exp.h"

// GCC 12's AVX-512 intrinsics pass _mm512_undefined_*() (a self-initialized variable) as the
// unused merge operand, which -Wmaybe-uninitialized reports once inlined here (as in
// x86_vec512.h; Clang has no such warning, nor the group).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif

namespace pocketlm::x86 {

void exp_avx512(float* x, int n) { exp_array<Vec512>(x, n); }

float exp_sum_avx512(float* x, int n, float max) { return exp_sum_array<Vec512>(x, n, max); }

}  // namespace pocketlm::x86
