// Sampler: picks the next token from logits with llama2.c's exact semantics
// (run.c's sample(): argmax at temperature 0, else softmax(logits / T) and one coin from
// the xorshift* RNG for multinomial or top-p "nucleus" sampling, Holtzman et al. 2019),
// plus a defined answer where run.c has none (non-finite probabilities; see sample()).
#pragma once

#include <cstdint>

#include "pocketlm/kernels/kernels.h"
#include "pocketlm/memory/arena.h"
#include "pocketlm/sampling/rng.h"
#include "pocketlm/sampling/topp.h"

namespace pocketlm {

inline constexpr const char* kSamplerRegion = "sampler scratch";

struct SamplerParams {
  float temperature = 1.0f;  // 0 = greedy (argmax); the CLI clamps negatives to 0 as run.c
  float topp = 0.9f;         // nucleus mass; <= 0 or >= 1 means plain multinomial
  std::uint64_t seed = 1;    // xorshift* state; must not be 0
};

// First index of the largest of values[n] (n >= 1); ties go to the lowest index (run.c's
// sample_argmax). NaN never wins: the result is the argmax of the non-NaN values, and 0
// when all are NaN (run.c differs only when values[0] is NaN: it returns 0).
int sample_argmax(const float* values, int n);
// First index whose running float CDF exceeds coin, else n - 1 (run.c's sample_mult).
int sample_mult(const float* probs, int n, float coin);

// True for a positive temperature below FLT_MIN (~1.18e-38, i.e. subnormal, down to 1e-45):
// sample() then always answers with the T -> 0 limit, the argmax, as at temperature 0.
// Lets the CLI warn before generating; larger temperatures can still overflow logits / T
// (e.g. 2e-38 with logits above ~6.8), which sample() reports as kGreedyLimit.
bool temperature_is_greedy_limit(float temperature);

// What the last sample() did.
enum class SampleOutcome : std::uint8_t {
  kSampled,          // run.c's rule: argmax at temperature 0, else a softmax sample
  kGreedyLimit,      // temperature > 0 but subnormal, or max(logits) / T overflows to +-inf:
                     // run.c's softmax would give NaN; answered with the T -> 0 limit (argmax)
  kNonFiniteLogits,  // temperature > 0 and a logit is NaN, or the largest is +inf, or all are
                     // -inf: answered with the argmax of the non-NaN logits
};

class Sampler {
 public:
  // Arena bytes carve() takes for a vocabulary: top-p scratch, 8 * vocab_size + 6 or 24 KiB (topp.h).
  static std::uint64_t scratch_bytes(int vocab_size);
  // Carves the top-p scratch from the arena (vocab_size >= 1).
  Status carve(int vocab_size, Arena& arena);
  // Sets temperature, top-p and seed; restarts the RNG and the fallback counters. The
  // softmax is computed here (sampling/softmax.h, run.c's arithmetic with the division by T)
  // with the expf of `kernels` (its exp_sum slot), which must outlive the sampler's use.
  void configure(const SamplerParams& params, const Kernels& kernels);

  // Samples a token id from logits[vocab_size] and always returns one in [0, vocab_size).
  // temperature 0: argmax of the logits, which are left unchanged, no coin drawn.
  // temperature < 0 or NaN: as 0 (run.c clamps a negative -t to 0 before sampling).
  // temperature > 0: when no logit is NaN and max(logits) / T is finite, exactly run.c
  // (the logits are overwritten with probabilities, one coin is drawn). Otherwise run.c's
  // softmax would produce NaN (and its top-p read before its array): the argmax is
  // returned instead, no coin is drawn, the logits are left unchanged, and the reason is
  // reported by last_outcome() and counted (kGreedyLimit / kNonFiniteLogits). One more
  // NaN source of run.c, -inf / inf at T = +inf, is avoided by using FLT_MAX as T then.
  int sample(float* logits);

  SampleOutcome last_outcome() const { return last_outcome_; }
  // sample() calls since configure() that answered with kGreedyLimit / kNonFiniteLogits.
  int greedy_limit_samples() const { return greedy_limit_samples_; }
  int nonfinite_samples() const { return nonfinite_samples_; }

  const SamplerParams& params() const { return params_; }
  Rng& rng() { return rng_; }

 private:
  int vocab_size_ = 0;
  // The backend's slots, set by configure() (the reference ones until then).
  ExpSumFn exp_sum_ = reference_kernels().exp_sum;
  CompactFn compact_ = reference_kernels().compact_at_least;
  ToppScratch scratch_;
  SamplerParams params_;
  Rng rng_;
  SampleOutcome last_outcome_ = SampleOutcome::kSampled;
  int greedy_limit_samples_ = 0;
  int nonfinite_samples_ = 0;
};

}  // namespace pocketlm
