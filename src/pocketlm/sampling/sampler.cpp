#include "pocketlm/sampling/sampler.h"

#include <algorithm>

namespace pocketlm {

int sample_argmax(const float* probs, int n) {
  int max_i = 0;
  float max_p = probs[0];
  for (int i = 1; i < n; ++i) {
    if (probs[i] > max_p) {
      max_i = i;
      max_p = probs[i];
    }
  }
  return max_i;
}

int sample_mult(const float* probs, int n, float coin) {
  float cdf = 0.0f;
  for (int i = 0; i < n; ++i) {
    cdf += probs[i];
    if (coin < cdf) return i;
  }
  return n - 1;  // in case of rounding errors
}

int sample_topp(const float* probs, int n, float topp, ProbIndex* scratch, float coin) {
  // Tokens below this probability cannot be in the nucleus (llama2.c's pre-filter).
  const float cutoff = (1.0f - topp) / static_cast<float>(n - 1);
  int n0 = 0;
  for (int i = 0; i < n; ++i) {
    if (probs[i] >= cutoff) scratch[n0++] = ProbIndex{probs[i], i};
  }
  if (n0 == 0) return sample_argmax(probs, n);  // run.c would index scratch[-1] here
  // Descending by probability; equal probabilities keep index order, as glibc's stable
  // qsort (a merge sort) leaves them in run.c. Ordering by index on ties makes an
  // in-place sort give the same sequence without the merge sort's buffer.
  std::sort(scratch, scratch + n0, [](const ProbIndex& a, const ProbIndex& b) {
    return a.prob != b.prob ? a.prob > b.prob : a.index < b.index;
  });
  float cumulative = 0.0f;
  int last = n0 - 1;
  for (int i = 0; i < n0; ++i) {
    cumulative += scratch[i].prob;
    if (cumulative > topp) {
      last = i;
      break;
    }
  }
  const float r = coin * cumulative;
  float cdf = 0.0f;
  for (int i = 0; i <= last; ++i) {
    cdf += scratch[i].prob;
    if (r < cdf) return scratch[i].index;
  }
  return scratch[last].index;
}

Status Sampler::carve(int vocab_size, Arena& arena) {
  vocab_size_ = vocab_size;
  void* p = nullptr;
  POCKETLM_TRY(arena.allocate(static_cast<std::uint64_t>(vocab_size) * sizeof(ProbIndex), kSamplerRegion, &p));
  scratch_ = static_cast<ProbIndex*>(p);
  return Status();
}

void Sampler::configure(const SamplerParams& params, const Kernels& kernels) {
  params_ = params;
  rng_ = Rng(params.seed);
  kernels_ = &kernels;
}

int Sampler::sample(float* logits) {
  if (params_.temperature == 0.0f) return sample_argmax(logits, vocab_size_);
  for (int q = 0; q < vocab_size_; ++q) logits[q] /= params_.temperature;
  kernels_->softmax(logits, vocab_size_);
  const float coin = rng_.next_f32();
  if (params_.topp <= 0.0f || params_.topp >= 1.0f) return sample_mult(logits, vocab_size_, coin);
  return sample_topp(logits, vocab_size_, params_.topp, scratch_, coin);
}

}  // namespace pocketlm
