// run.c's sample_topp() statement by statement, kept as the oracle for the radix version.
#include <algorithm>

#include "pocketlm/sampling/sampler.h"
#include "pocketlm/sampling/topp.h"

namespace pocketlm {

int sample_topp_sorted(const float* probs, int n, float topp, ProbIndex* scratch, float coin) {
  if (!(topp > 0.0f && topp < 1.0f)) return sample_mult(probs, n, coin);
  const float cutoff = (1.0f - topp) / static_cast<float>(n - 1);
  int n0 = 0;
  for (int i = 0; i < n; ++i) {
    if (probs[i] >= cutoff) {
      scratch[n0].index = i;
      scratch[n0].prob = probs[i];
      n0++;
    }
  }
  if (n0 == 0) return sample_argmax(probs, n);  // where run.c reads scratch[-1]
  // glibc's qsort is a stable merge sort: equal probabilities stay in id order, which is
  // what ordering by (probability descending, id ascending) gives with any sort.
  std::sort(scratch, scratch + n0, [](const ProbIndex& a, const ProbIndex& b) {
    return a.prob != b.prob ? a.prob > b.prob : a.index < b.index;
  });
  float cumulative_prob = 0.0f;
  int last_idx = n0 - 1;
  for (int i = 0; i < n0; i++) {
    cumulative_prob += scratch[i].prob;
    if (cumulative_prob > topp) {
      last_idx = i;
      break;
    }
  }
  const float r = coin * cumulative_prob;
  float cdf = 0.0f;
  for (int i = 0; i <= last_idx; i++) {
    cdf += scratch[i].prob;
    if (r < cdf) return scratch[i].index;
  }
  return scratch[last_idx].index;
}

}  // namespace pocketlm
