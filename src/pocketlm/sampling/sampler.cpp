#include "pocketlm/sampling/sampler.h"

#include <algorithm>

namespace pocketlm {

// run.c's argmax: the first index of the largest value. In two passes that a compiler can
// vectorize: the largest value (8 running maxima; max is exact in any order), then the first
// index holding a value equal to it. -0.0 and +0.0 compare equal, as in run.c's `>` scan, and
// the values are finite (generate() checks the logits; probabilities are).
int sample_argmax(const float* probs, int n) {
  constexpr int kWays = 8;
  float m[kWays];
  for (int k = 0; k < kWays; ++k) m[k] = probs[0];
  int i = 0;
  for (; i + kWays <= n; i += kWays)
    for (int k = 0; k < kWays; ++k) m[k] = probs[i + k] > m[k] ? probs[i + k] : m[k];
  float max_p = m[0];
  for (int k = 1; k < kWays; ++k) max_p = m[k] > max_p ? m[k] : max_p;
  for (; i < n; ++i) max_p = probs[i] > max_p ? probs[i] : max_p;
  for (int j = 0; j < n; ++j)
    if (probs[j] == max_p) return j;
  return 0;
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
  // run.c sorts all n0 candidates by probability (descending; glibc's stable qsort keeps
  // index order on ties) and walks them until the running sum exceeds topp. Only that
  // prefix matters, and it is usually short, so the candidates become a max-heap under
  // the same order and are popped one at a time: the same sequence, hence the same sums
  // and the same token, in O(n0 + k log n0) instead of O(n0 log n0).
  auto after = [](const ProbIndex& a, const ProbIndex& b) {
    return a.prob != b.prob ? a.prob < b.prob : a.index > b.index;
  };
  std::make_heap(scratch, scratch + n0, after);
  float cumulative = 0.0f;
  int taken = 0;  // scratch[n0 - taken, n0) holds the popped prefix, last popped first
  while (taken < n0) {
    std::pop_heap(scratch, scratch + (n0 - taken), after);
    ++taken;
    cumulative += scratch[n0 - taken].prob;
    if (cumulative > topp) break;
  }
  const float r = coin * cumulative;
  float cdf = 0.0f;
  for (int i = 1; i <= taken; ++i) {
    cdf += scratch[n0 - i].prob;
    if (r < cdf) return scratch[n0 - i].index;
  }
  return scratch[n0 - taken].index;  // in case of rounding errors
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
