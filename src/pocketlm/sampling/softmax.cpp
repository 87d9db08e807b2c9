#include "pocketlm/sampling/softmax.h"

#include <cmath>

namespace pocketlm {

float softmax_tempered(float* logits, int n, float temperature, float max_logit, ExpFn exp) {
  // Each step is one rounded float operation as in run.c (the library is built with
  // -ffp-contract=off): x / T, then x - max, then expf, then the running sum.
  const float max_val = max_logit / temperature;
  // Separate passes: the divisions and subtractions (vectorized), expf (the exp slot), the
  // running sum in index order, and the normalization (vectorized).
  if (temperature == 1.0f)  // run.c's default: x / 1 is x, bit for bit, without a division
    for (int i = 0; i < n; ++i) logits[i] = logits[i] - max_val;
  else
    for (int i = 0; i < n; ++i) logits[i] = logits[i] / temperature - max_val;
  exp(logits, n);
  float sum = 0.0f;
  for (int i = 0; i < n; ++i) sum += logits[i];
  for (int i = 0; i < n; ++i) logits[i] /= sum;
  return 1.0f / sum;
}

}  // namespace pocketlm
