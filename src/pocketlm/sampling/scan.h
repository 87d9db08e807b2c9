// Passes over a float array for the facts the sampler checks before trusting it. Two
// separate loops: each alone compiles to SIMD compares; fused, neither does (measured).
#pragma once

namespace pocketlm {

// Largest non-NaN value of values[n]; -inf when there is none (or n == 0). Exact: a
// maximum does not depend on the order it is taken in.
float max_ignoring_nan(const float* values, int n);

// Whether some value of values[n] is NaN.
bool any_nan(const float* values, int n);

}  // namespace pocketlm
