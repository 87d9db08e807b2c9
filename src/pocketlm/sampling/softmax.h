// run.c's `for q: logits[q] /= T; softmax(logits, n);` fused into two passes.
#pragma once

namespace pocketlm {

// Overwrites logits[n] with softmax(logits / temperature), bit for bit what run.c computes
// (and what Kernels::softmax gives on the divided logits): expf(x / T - max) in index
// order, summed in float in index order, each divided by the sum. max_logit must be the
// largest of logits[n], and temperature > 0 such that max_logit / temperature is finite
// and no logit / temperature is NaN (the Sampler checks this first). Dividing by T > 0 keeps
// the order of the logits, so the largest scaled logit is max_logit / temperature and
// run.c's separate max pass and division pass are not needed.
void softmax_tempered(float* logits, int n, float temperature, float max_logit);

}  // namespace pocketlm
