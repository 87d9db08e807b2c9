// GELU in its exact (erf) form, 0.5 x (1 + erf(x / sqrt(2))) (Hendrycks and Gimpel, 2016, as
// PyTorch's nn.GELU() computes it; not the tanh approximation), in float arithmetic of our own:
// additions, multiplications, one division and exponent bits, no libm. The C libraries' erff
// and expf differ between glibc, newlib and a PSP's toolchain; this gives the same bits on every
// target built with -ffp-contract=off (src/pocketlm/CMakeLists.txt), so host, MIPS and
// Cortex-M runs of a per-layer-embedding model agree.
#pragma once

namespace pocketlm {

// gelu(x) for any float x: within 1.2e-7 * max(1, |x|) of the exact value (relative 2.3e-6
// in the far negative tail, where the result is below 1e-6 in magnitude); +inf for +inf, -0
// for x below -12.7 (exact: a tiny negative number), NaN for NaN. No step overflows, divides
// by zero or operates on an infinity, so an FPU that traps on those (a PSP's) never does here.
float gelu(float x);

}  // namespace pocketlm
