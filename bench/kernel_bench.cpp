// Kernel microbenchmarks at the stories15M shapes (dim 288, hidden_dim 768, vocab 32000):
// matmul fp32 and q8_0 (GS 32) for every backend in this build. Reports multiply-adds per
// second (MAC/s) and weight bytes streamed per second.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

#include "pocketlm/kernels/kernels.h"

namespace {

using pocketlm::Kernels;

std::vector<float> random_floats(std::size_t n, std::uint64_t seed) {
  std::vector<float> v(n);
  for (auto& x : v) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    x = static_cast<float>(static_cast<std::int32_t>(seed >> 32)) / 2147483648.0f;
  }
  return v;
}

void set_counters(benchmark::State& state, double macs, double weight_bytes) {
  state.counters["MAC/s"] = benchmark::Counter(macs, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["bytes/s"] = benchmark::Counter(weight_bytes, benchmark::Counter::kIsIterationInvariantRate);
}

void BM_MatmulF32(benchmark::State& state, const Kernels* k) {
  const int d = static_cast<int>(state.range(0)), n = static_cast<int>(state.range(1));
  auto w = random_floats(static_cast<std::size_t>(d) * n, 1);
  auto x = random_floats(static_cast<std::size_t>(n), 2);
  std::vector<float> out(static_cast<std::size_t>(d));
  for (auto _ : state) {
    k->matmul_f32(out.data(), x.data(), w.data(), n, d);
    benchmark::DoNotOptimize(out.data());
  }
  set_counters(state, double(d) * n, double(d) * n * 4);
}

void BM_MatmulQ80(benchmark::State& state, const Kernels* k) {
  const int d = static_cast<int>(state.range(0)), n = static_cast<int>(state.range(1));
  const int gs = 32;
  auto wf = random_floats(static_cast<std::size_t>(d) * n, 1);
  auto xf = random_floats(static_cast<std::size_t>(n), 2);
  std::vector<std::int8_t> wq(wf.size()), xq(xf.size());
  std::vector<float> ws(wf.size() / gs), xs(xf.size() / gs), out(static_cast<std::size_t>(d));
  k->quantize_q80(wf.data(), static_cast<int>(wf.size()), gs, wq.data(), ws.data());
  k->quantize_q80(xf.data(), n, gs, xq.data(), xs.data());
  for (auto _ : state) {
    k->matmul_q80(out.data(), xq.data(), xs.data(), wq.data(), ws.data(), n, d, gs);
    benchmark::DoNotOptimize(out.data());
  }
  set_counters(state, double(d) * n, double(d) * n * (1.0 + 4.0 / gs));
}

// {rows (out), cols (in)}: wq/wo, w1/w3, w2, classifier.
void shapes(benchmark::internal::Benchmark* b) {
  b->Args({288, 288})->Args({768, 288})->Args({288, 768})->Args({32000, 288});
}

int register_all() {
  for (const char* const* name = pocketlm::kernel_names(); *name; ++name) {
    const Kernels* k = pocketlm::find_kernels(*name);
    if (!k) continue;
    benchmark::RegisterBenchmark((std::string("matmul_f32/") + *name).c_str(), BM_MatmulF32, k)->Apply(shapes);
    benchmark::RegisterBenchmark((std::string("matmul_q80/") + *name).c_str(), BM_MatmulQ80, k)->Apply(shapes);
  }
  return 0;
}
const int kRegistered = register_all();

}  // namespace

BENCHMARK_MAIN();
