// Sampler: picks the next token from logits with llama2.c's exact semantics
// (run.c's sample(): argmax at temperature 0, else softmax(logits / T) and one coin from
// the xorshift* RNG for multinomial or top-p "nucleus" sampling, Holtzman et al. 2019).
#pragma once

#include <cstdint>

#include "pocketlm/kernels/kernels.h"
#include "pocketlm/memory/arena.h"
#include "pocketlm/sampling/rng.h"
#include "pocketlm/sampling/topp.h"

namespace pocketlm {

inline constexpr const char* kSamplerRegion = "sampler scratch";

struct SamplerParams {
  float temperature = 1.0f;  // 0 = greedy (argmax)
  float topp = 0.9f;         // nucleus mass; <= 0 or >= 1 means plain multinomial
  std::uint64_t seed = 1;    // xorshift* state; must not be 0
};

// First index of the largest value (ties go to the lowest index).
int sample_argmax(const float* probs, int n);
// First index whose running float CDF exceeds coin, else n - 1.
int sample_mult(const float* probs, int n, float coin);

class Sampler {
 public:
  // Arena bytes carve() takes for a vocabulary: top-p scratch, 8 * vocab_size + 6 KiB.
  static std::uint64_t scratch_bytes(int vocab_size);
  // Carves the top-p scratch from the arena (vocab_size >= 1).
  Status carve(int vocab_size, Arena& arena);
  void configure(const SamplerParams& params, const Kernels& kernels);

  // Samples from logits[vocab_size]; the logits are overwritten with probabilities unless
  // temperature is 0.
  int sample(float* logits);

  const SamplerParams& params() const { return params_; }
  Rng& rng() { return rng_; }

 private:
  int vocab_size_ = 0;
  ToppScratch scratch_;
  SamplerParams params_;
  Rng rng_;
  const Kernels* kernels_ = nullptr;
};

}  // namespace pocketlm
