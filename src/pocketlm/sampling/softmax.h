// run.c's `for q: logits[q] /= T; softmax(logits, n);` without run.c's max pass.
#pragma once

#include "pocketlm/kernels/kernels.h"

namespace pocketlm {

// Overwrites logits[n] with softmax(logits / temperature), bit for bit what run.c computes
// (and what Kernels::softmax gives on the divided logits): expf(x / T - max) in index
// order, summed in float in index order, each divided by the sum. max_logit must be the
// largest of logits[n], and temperature > 0 such that max_logit / temperature is finite
// and no logit / temperature is NaN (the Sampler checks this first). Dividing by T > 0 keeps
// the order of the logits, so the largest scaled logit is max_logit / temperature and
// run.c's separate max pass is not needed. exp_sum: the backend's slot (vectorized where the
// backend proved its expf gives the C library's bits). Returns the largest probability,
// 1 / sum: the max logit's expf(0) = 1 divided by the sum, and every other term is at most 1.
float softmax_tempered(float* logits, int n, float temperature, float max_logit, ExpSumFn exp_sum);

}  // namespace pocketlm
