// Fuzzes the Sampler and top-p: logits with NaN, +-inf, subnormals and huge values, any
// temperature and top-p. Every sampled id must be in range; a greedy fallback must be the
// argmax of the logits; the radix top-p must give the full-sort oracle's token, both on the
// softmax probabilities and on the raw floats taken as probabilities. ASan + UBSan watch.
//
// Input: [mode][temperature: 4][topp: 4][seed][coin: 4][logits...]. mode bit 0: temperature
// and topp are raw float bits, else picked from tables of edge values by their first byte;
// bit 1: logits are raw float bits (4 bytes each), else one byte each through kLogitTable.
#include <cmath>
#include <cstring>
#include <limits>

#include "fuzz_common.h"
#include "pocketlm/kernels/kernels.h"
#include "pocketlm/sampling/sampler.h"
#include "pocketlm/sampling/topp.h"

using namespace pocketlm;

namespace {

constexpr int kMaxVocab = 4096;
constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

const float kTemperatures[] = {0.0f, 1.0f, 0.8f, 2e-38f, 1e-45f, 1.1754942e-38f, 1e-30f, 1e30f,
                               kInf, kNaN, -1.0f, 0.5f, 3.4e38f, 1e-3f, 1.5f, 2.0f};
const float kTopps[] = {0.9f, 0.0f, 1.0f, 0.5f, 1e-45f, 0.99999994f, 1e-7f, kNaN,
                        -0.1f, 1.1f, 0.95f, 0.1f, 0.999f, 0.3f, 0.75f, 0.9999f};

float bits_to_float(const std::uint8_t* p) {
  float f;
  std::memcpy(&f, p, 4);
  return f;
}

// Byte -> logit: mostly a ladder of moderate values in steps of 1/8 (exact ties are common),
// with the special values on a few bytes.
float table_logit(std::uint8_t b) {
  switch (b) {
    case 0: return kNaN;
    case 1: return kInf;
    case 2: return -kInf;
    case 3: return 1e-45f;
    case 4: return -1e-45f;
    case 5: return 3.4e38f;
    case 6: return -3.4e38f;
    case 7: return -0.0f;
    case 8: return 1e30f;
    default: return static_cast<float>(b) / 8.0f - 16.0f;
  }
}

void check(bool ok) {
  if (!ok) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 15) return 0;
  const std::uint8_t mode = data[0];
  const float temperature = (mode & 1) ? bits_to_float(data + 1) : kTemperatures[data[1] % 16];
  const float topp = (mode & 1) ? bits_to_float(data + 5) : kTopps[data[5] % 16];
  const std::uint64_t seed = 1 + data[9];
  float coin = std::fabs(bits_to_float(data + 10));
  if (!(coin < 1.0f)) coin = 0.5f;  // the Rng's coins are in [0, 1)
  const std::uint8_t* rest = data + 14;
  const std::size_t rest_bytes = size - 14;
  const bool raw = mode & 2;
  std::size_t n = raw ? rest_bytes / 4 : rest_bytes;
  if (n < 1) return 0;
  if (n > kMaxVocab) n = kMaxVocab;
  const int vocab = static_cast<int>(n);
  std::vector<float> logits(n);
  for (std::size_t i = 0; i < n; ++i) logits[i] = raw ? bits_to_float(rest + 4 * i) : table_logit(rest[i]);

  // The Sampler in an arena of exactly its scratch (ASan sees any write past it).
  Arena arena;
  if (!arena.init_owned(Sampler::scratch_bytes(vocab)).ok()) std::abort();
  Sampler sampler;
  if (!sampler.carve(vocab, arena).ok()) std::abort();
  sampler.configure(SamplerParams{temperature, topp, seed}, reference_kernels());
  // The same with this CPU's default backend (its vector expf and sum, its top-p filter): the
  // same tokens and the same probability bits.
  Arena fast_arena;
  if (!fast_arena.init_owned(Sampler::scratch_bytes(vocab)).ok()) std::abort();
  Sampler fast_sampler;
  if (!fast_sampler.carve(vocab, fast_arena).ok()) std::abort();
  fast_sampler.configure(SamplerParams{temperature, topp, seed}, default_kernels());
  // Scratch of the direct top-p calls, exact size too.
  std::vector<ProbIndex> pairs(n);
  std::vector<std::uint32_t> topp_memory(topp_scratch_bytes(vocab) / sizeof(std::uint32_t));
  const ToppScratch own = topp_scratch_at(topp_memory.data(), vocab);

  for (int step = 0; step < 2; ++step) {
    std::vector<float> work = logits;  // exact size: ASan catches reads past the vocabulary
    const int id = sampler.sample(work.data());
    check(id >= 0 && id < vocab);
    std::vector<float> fast_work = logits;
    check(fast_sampler.sample(fast_work.data()) == id);
    check(fast_sampler.last_outcome() == sampler.last_outcome());
    check(std::memcmp(fast_work.data(), work.data(), n * sizeof(float)) == 0);
    const SampleOutcome outcome = sampler.last_outcome();
    if (outcome != SampleOutcome::kSampled || !(temperature > 0.0f)) {
      // Greedy (asked for, or the fallback): the argmax, logits untouched (bit for bit).
      check(id == sample_argmax(logits.data(), vocab));
      check(std::memcmp(work.data(), logits.data(), n * sizeof(float)) == 0);
    } else if (topp > 0.0f && topp < 1.0f) {
      // work holds run.c's probabilities: the radix top-p and the oracle must agree.
      check(sample_topp(work.data(), vocab, topp, own, coin) ==
            sample_topp_sorted(work.data(), vocab, topp, pairs.data(), coin));
    }
    logits[static_cast<std::size_t>(id)] = -logits[static_cast<std::size_t>(id)];  // vary step 2
  }
  // Any floats at all as "probabilities": same token, in range.
  const int fast = sample_topp(logits.data(), vocab, topp, own, coin);
  check(fast >= 0 && fast < vocab);
  check(fast == sample_topp_sorted(logits.data(), vocab, topp, pairs.data(), coin));
  return 0;
}
