// exp_fma and exp_sum_fma (kernels/x86_expf.h): kernels/x86_exp.h over 8 lanes (Vec256),
// compiled with -mavx2 -mfma for CPUs that have both (x86_expf.cpp's select_exp checks).
#include "pocketlm/kernels/x86_expf.h"
#include "pocketlm/kernels/x86_vec256.h"
#include "pocketlm/kernels/x86_exp.h"

namespace pocketlm::x86 {

void exp_fma(float* x, int n) { exp_array<Vec256>(x, n); }

float exp_sum_fma(float* x, int n, float max) { return exp_sum_array<Vec256>(x, n, max); }

}  // namespace pocketlm::x86
