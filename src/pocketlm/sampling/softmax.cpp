#include "pocketlm/sampling/softmax.h"

#include <cmath>

namespace pocketlm {

void softmax_tempered(float* logits, int n, float temperature, float max_logit) {
  // Each step is one rounded float operation as in run.c (the library is built with
  // -ffp-contract=off): x / T, then x - max, then expf, then the running sum.
  const float max_val = max_logit / temperature;
  // The divisions and subtractions first, a pass the compiler vectorizes; then expf and the
  // running sum, which must stay in index order.
  for (int i = 0; i < n; ++i) logits[i] = logits[i] / temperature - max_val;
  float sum = 0.0f;
  for (int i = 0; i < n; ++i) {
    const float x = std::exp(logits[i]);
    logits[i] = x;
    sum += x;
  }
  for (int i = 0; i < n; ++i) logits[i] /= sum;
}

}  // namespace pocketlm
