#include "pocketlm/sampling/sampler.h"

#include <cmath>
#include <limits>

#include "pocketlm/sampling/scan.h"
#include "pocketlm/sampling/softmax.h"

namespace pocketlm {

int sample_argmax(const float* values, int n) {
  // Two vectorizable passes instead of one loop of dependent compares (greedy decode runs this
  // over every vocabulary entry per token): the largest non-NaN value, then its first index,
  // found a block at a time with a branch-free "any equal" per block. When every value is NaN,
  // max_ignoring_nan gives -inf, which no value equals: index 0.
  const float largest = max_ignoring_nan(values, n);
  constexpr int kBlock = 64;
  for (int b = 0; b < n; b += kBlock) {
    const int e = n - b < kBlock ? n : b + kBlock;
    unsigned hit = 0;
    for (int i = b; i < e; ++i) hit |= values[i] == largest;
    if (!hit) continue;
    for (int i = b; i < e; ++i)
      if (values[i] == largest) return i;
  }
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

namespace {

// x / inf is 0 for every finite x, but NaN for x = -inf (a token a caller masked out), where
// run.c's softmax turns NaN everywhere. With such a logit an infinite temperature becomes
// the largest finite one: -inf stays -inf (probability 0) and the rest is as flat as T
// allows. Without one, run.c's arithmetic is kept exactly.
float finite_temperature(float t, const float* logits, int n) {
  if (!std::isinf(t)) return t;
  for (int i = 0; i < n; ++i)
    if (logits[i] == -std::numeric_limits<float>::infinity()) return std::numeric_limits<float>::max();
  return t;
}

}  // namespace

bool temperature_is_greedy_limit(float temperature) {
  return temperature > 0.0f && temperature < std::numeric_limits<float>::min();
}

std::uint64_t Sampler::scratch_bytes(int vocab_size) { return topp_scratch_bytes(vocab_size); }

Status Sampler::carve(int vocab_size, Arena& arena) {
  vocab_size_ = vocab_size;
  void* p = nullptr;
  POCKETLM_TRY(arena.allocate(scratch_bytes(vocab_size), kSamplerRegion, &p));
  // A measuring arena hands out null: no layout over it (null + offset is undefined).
  scratch_ = p ? topp_scratch_at(p, vocab_size) : ToppScratch{};
  return Status();
}

void Sampler::configure(const SamplerParams& params, const Kernels& kernels) {
  params_ = params;
  exp_sum_ = kernels.exp_sum;
  compact_ = kernels.compact_at_least;
  rng_ = Rng(params.seed);
  last_outcome_ = SampleOutcome::kSampled;
  greedy_limit_samples_ = 0;
  nonfinite_samples_ = 0;
}

int Sampler::sample(float* logits) {
  const int n = vocab_size_;
  const float t = params_.temperature;
  last_outcome_ = SampleOutcome::kSampled;
  if (!(t > 0.0f)) return sample_argmax(logits, n);
  // run.c's softmax(logits / T) is finite exactly when no scaled logit is NaN and the
  // largest is finite (then every exp(x - max) is in [0, 1] and the sum in [1, n]). Division
  // by T > 0 keeps the order, so the largest is max(logits) / T; a NaN scaled logit comes
  // from a NaN logit, or from -inf / inf (see finite_temperature).
  const float max_logit = max_ignoring_nan(logits, n);
  if (!std::isfinite(max_logit) || any_nan(logits, n)) {
    last_outcome_ = SampleOutcome::kNonFiniteLogits;
    ++nonfinite_samples_;
    return sample_argmax(logits, n);
  }
  // As T -> 0 the softmax tends to the argmax; a subnormal T is treated as that limit
  // whatever the logits (the issue-9 contract: -t 1e-45 gives the tokens of -t 0).
  if (temperature_is_greedy_limit(t) || !std::isfinite(max_logit / t)) {
    last_outcome_ = SampleOutcome::kGreedyLimit;
    ++greedy_limit_samples_;
    return sample_argmax(logits, n);
  }
  const float largest = softmax_tempered(logits, n, finite_temperature(t, logits, n), max_logit, exp_sum_);
  const float coin = rng_.next_f32();
  if (!(params_.topp > 0.0f && params_.topp < 1.0f)) return sample_mult(logits, n, coin);
  return sample_topp(logits, n, params_.topp, scratch_, coin, largest, compact_);
}

}  // namespace pocketlm
