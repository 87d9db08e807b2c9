#include "pocketlm/sampling/softmax.h"

namespace pocketlm {

float softmax_tempered(float* logits, int n, float temperature, float max_logit, ExpSumFn exp_sum) {
  // Each step is one rounded float operation as in run.c (the library is built with
  // -ffp-contract=off): x / T, then x - max, then expf, then the running sum. Passes: the
  // divisions (vectorized), the exp_sum slot (x - max, expf, the sum in index order) and the
  // normalization (vectorized).
  const float max_val = max_logit / temperature;
  if (temperature != 1.0f)  // run.c's default: x / 1 is x, bit for bit, without a division
    for (int i = 0; i < n; ++i) logits[i] = logits[i] / temperature;
  const float sum = exp_sum(logits, n, max_val);
  for (int i = 0; i < n; ++i) logits[i] /= sum;
  return 1.0f / sum;
}

}  // namespace pocketlm
