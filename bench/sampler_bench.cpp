// Sampling cost per token at a 32000-token vocabulary (the Llama 2 tokenizer of the
// stories15M/42M/110M shapes), next to the forward pass it follows (docs/performance.md:
// ~2.5 ms fp32, ~0.9 ms q80 for stories15M on one AVX2 core).
//
// Two logit distributions, drawn once from a fixed seed:
//   flat   - Gaussian logits with sigma 0.15: near-uniform, the top-p 0.9 nucleus holds
//            ~28,000 tokens (what a random-weight model produces; issue 9);
//   peaked - Gaussian logits with sigma 4: a nucleus of a few hundred tokens.
// Counters: "nucleus" = tokens run.c's walk takes at topp 0.9, "candidates" = tokens
// above its cutoff (1 - topp) / (n - 1).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "pocketlm/kernels/kernels.h"
#include "pocketlm/memory/arena.h"
#include "pocketlm/sampling/sampler.h"
#include "pocketlm/sampling/softmax.h"

namespace {

using namespace pocketlm;

constexpr int kVocab = 32000;
constexpr float kTopp = 0.9f;

// Gaussian logits (Box-Muller over a 64-bit LCG) scaled by sigma.
std::vector<float> gaussian_logits(float sigma, std::uint64_t seed) {
  std::vector<float> v(kVocab);
  auto uniform = [&seed] {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    return (static_cast<double>(seed >> 11) + 0.5) / 9007199254740992.0;
  };
  for (float& x : v) x = static_cast<float>(sigma * std::sqrt(-2.0 * std::log(uniform())) * std::cos(6.283185307179586 * uniform()));
  return v;
}

std::vector<float> logits_for(int shape) { return gaussian_logits(shape == 0 ? 0.15f : 4.0f, 7); }
const char* shape_name(int shape) { return shape == 0 ? "flat" : "peaked"; }

std::vector<float> probs_for(int shape) {
  std::vector<float> p = logits_for(shape);
  reference_kernels().softmax(p.data(), kVocab);
  return p;
}

void describe(benchmark::State& state, const std::vector<float>& probs) {
  std::vector<float> sorted;
  const float cutoff = (1.0f - kTopp) / static_cast<float>(kVocab - 1);
  for (float p : probs)
    if (p >= cutoff) sorted.push_back(p);
  std::stable_sort(sorted.begin(), sorted.end(), [](float a, float b) { return a > b; });
  float cumulative = 0.0f;
  std::size_t taken = 0;
  while (taken < sorted.size() && cumulative <= kTopp) cumulative += sorted[taken++];
  state.counters["candidates"] = static_cast<double>(sorted.size());
  state.counters["nucleus"] = static_cast<double>(taken);
  state.SetLabel(shape_name(static_cast<int>(state.range(0))));
}

// The whole Sampler::sample(): logits / T, softmax, coin, top-p (the logits are restored
// from a copy each time, ~128 KB of memcpy, included).
void BM_SampleTopp(benchmark::State& state) {
  const std::vector<float> logits = logits_for(static_cast<int>(state.range(0)));
  Arena arena;
  if (!arena.init_owned(4u << 20).ok()) return state.SkipWithError("arena");
  Sampler sampler;
  if (!sampler.carve(kVocab, arena).ok()) return state.SkipWithError("carve");
  sampler.configure(SamplerParams{1.0f, kTopp, 42}, default_kernels());
  std::vector<float> work(kVocab);
  for (auto _ : state) {
    std::memcpy(work.data(), logits.data(), sizeof(float) * kVocab);
    benchmark::DoNotOptimize(sampler.sample(work.data()));
  }
  describe(state, probs_for(static_cast<int>(state.range(0))));
}

// The same with topp 1 (plain multinomial): division, softmax and one CDF walk.
void BM_SampleMultinomial(benchmark::State& state) {
  const std::vector<float> logits = logits_for(static_cast<int>(state.range(0)));
  Arena arena;
  if (!arena.init_owned(4u << 20).ok()) return state.SkipWithError("arena");
  Sampler sampler;
  if (!sampler.carve(kVocab, arena).ok()) return state.SkipWithError("carve");
  sampler.configure(SamplerParams{1.0f, 1.0f, 42}, default_kernels());
  std::vector<float> work(kVocab);
  for (auto _ : state) {
    std::memcpy(work.data(), logits.data(), sizeof(float) * kVocab);
    benchmark::DoNotOptimize(sampler.sample(work.data()));
  }
  state.SetLabel(shape_name(static_cast<int>(state.range(0))));
}

// Greedy (temperature 0): the argmax scan alone, the floor of any sampling.
void BM_SampleGreedy(benchmark::State& state) {
  const std::vector<float> logits = logits_for(static_cast<int>(state.range(0)));
  Arena arena;
  if (!arena.init_owned(4u << 20).ok()) return state.SkipWithError("arena");
  Sampler sampler;
  if (!sampler.carve(kVocab, arena).ok()) return state.SkipWithError("carve");
  sampler.configure(SamplerParams{0.0f, kTopp, 42}, default_kernels());
  std::vector<float> work(logits);
  for (auto _ : state) benchmark::DoNotOptimize(sampler.sample(work.data()));
  state.SetLabel(shape_name(static_cast<int>(state.range(0))));
}

// The top-p step alone on ready probabilities (no softmax), one coin per call.
void BM_ToppOnly(benchmark::State& state) {
  const std::vector<float> probs = probs_for(static_cast<int>(state.range(0)));
  std::vector<unsigned char> memory(Sampler::scratch_bytes(kVocab));
  const ToppScratch scratch = topp_scratch_at(memory.data(), kVocab);
  Rng rng(42);
  // As the Sampler calls it: the largest probability known, the backend's candidate filter.
  const float largest = *std::max_element(probs.begin(), probs.end());
  const CompactFn compact = default_kernels().compact_at_least;
  for (auto _ : state)
    benchmark::DoNotOptimize(sample_topp(probs.data(), kVocab, kTopp, scratch, rng.next_f32(), largest, compact));
  describe(state, probs);
}

// run.c's softmax over the vocabulary as Kernels::softmax (the same for every backend).
void BM_Softmax(benchmark::State& state) {
  const std::vector<float> logits = logits_for(static_cast<int>(state.range(0)));
  std::vector<float> work(kVocab);
  for (auto _ : state) {
    std::memcpy(work.data(), logits.data(), sizeof(float) * kVocab);
    default_kernels().softmax(work.data(), kVocab);
    benchmark::DoNotOptimize(work.data());
  }
  state.SetLabel(shape_name(static_cast<int>(state.range(0))));
}

// The Sampler's own softmax: division by T fused in, no max pass (sampling/softmax.h).
void BM_SoftmaxTempered(benchmark::State& state) {
  const std::vector<float> logits = logits_for(static_cast<int>(state.range(0)));
  const float max_logit = *std::max_element(logits.begin(), logits.end());
  std::vector<float> work(kVocab);
  for (auto _ : state) {
    std::memcpy(work.data(), logits.data(), sizeof(float) * kVocab);
    softmax_tempered(work.data(), kVocab, 1.0f, max_logit, default_kernels().exp_sum);
    benchmark::DoNotOptimize(work.data());
  }
  state.SetLabel(shape_name(static_cast<int>(state.range(0))));
}

BENCHMARK(BM_SampleTopp)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_SampleMultinomial)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_SampleGreedy)->Arg(0)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ToppOnly)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Softmax)->Arg(0)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_SoftmaxTempered)->Arg(0)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
