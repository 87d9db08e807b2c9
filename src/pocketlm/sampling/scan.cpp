#include "pocketlm/sampling/scan.h"

#include <limits>

namespace pocketlm {

float max_ignoring_nan(const float* values, int n) {
  // Eight independent maxima, so no pass-long chain of dependent compares. `v > m ? v : m`
  // keeps m when v is NaN (the compare is false), which is also what SIMD max does.
  constexpr int kLanes = 8;
  float lane_max[kLanes];
  for (float& m : lane_max) m = -std::numeric_limits<float>::infinity();
  int i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int j = 0; j < kLanes; ++j) {
      const float v = values[i + j];
      lane_max[j] = v > lane_max[j] ? v : lane_max[j];
    }
  }
  for (; i < n; ++i) lane_max[0] = values[i] > lane_max[0] ? values[i] : lane_max[0];
  float m = lane_max[0];
  for (int j = 1; j < kLanes; ++j) m = lane_max[j] > m ? lane_max[j] : m;
  return m;
}

bool any_nan(const float* values, int n) {
  unsigned nan = 0;  // no early exit: a branch-free OR over the whole array vectorizes
  for (int i = 0; i < n; ++i) nan |= !(values[i] == values[i]);
  return nan != 0;
}

}  // namespace pocketlm
