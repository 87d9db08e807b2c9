#include "pocketlm/sampling/sampler.h"

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
