// Kernel microbenchmarks at the stories15M shapes (dim 288, hidden_dim 768, vocab 32000):
// matmul fp32, llama2.c q80 (GS 32) and the GGUF block types Q8_0 and Q4_0 (IQ4_XS at the
// stories110M shapes) for every backend in this build, q80, Q8_0 and Q4_0 batched as prefill runs
// them (a block of 64 tokens per weight read), and the exp slot over a vocabulary's softmax. Reports multiply-adds per second (MAC/s) and weight bytes
// streamed per second. bench/x86_int8_peak.cpp adds the avx2 int8 limits they compare with.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "pocketlm/kernels/batch.h"
#include "pocketlm/kernels/kernels.h"
#include "pocketlm/quant/iq4_xs.h"
#include "pocketlm/quant/q4_0.h"
#include "pocketlm/quant/q8_0.h"

namespace {

using namespace pocketlm;

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
  // Layout does not change the work: the weights are timed as they are (random either way).
  const Matrix m{TensorType::kF32, d, n, w.data(), nullptr, 0, interleave_of(*k, TensorType::kF32, 0)};
  const Activation a{x.data(), nullptr, n, 0};
  for (auto _ : state) {
    k->matmul[type_index(TensorType::kF32)](out.data(), m, a, d);
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
  const QuantizeFn quantize = k->quantize_act[type_index(TensorType::kQ80)];
  quantize(wf.data(), static_cast<int>(wf.size()), gs, wq.data(), ws.data());
  quantize(xf.data(), n, gs, xq.data(), xs.data());
  const Matrix m{TensorType::kQ80, d, n, wq.data(), ws.data(), gs, interleave_of(*k, TensorType::kQ80, gs)};
  const Activation a{xq.data(), xs.data(), n, gs};
  for (auto _ : state) {
    k->matmul[type_index(TensorType::kQ80)](out.data(), m, a, d);
    benchmark::DoNotOptimize(out.data());
  }
  set_counters(state, double(d) * n, double(d) * n * (1.0 + 4.0 / gs));
}

// The batched q80 matmul (kernels/batch.h) over 64 tokens, prefill's block: MAC/s over all the
// tokens, bytes/s the weights read once per call.
void BM_MatmulQ80Batch(benchmark::State& state, const Kernels* k) {
  constexpr int kTokens = 64;
  const int d = static_cast<int>(state.range(0)), n = static_cast<int>(state.range(1));
  const int gs = 32;
  auto wf = random_floats(static_cast<std::size_t>(d) * n, 1);
  auto xf = random_floats(static_cast<std::size_t>(n) * kTokens, 2);
  std::vector<std::int8_t> wq(wf.size()), xq(xf.size());
  std::vector<float> ws(wf.size() / gs), xs(xf.size() / gs), out(static_cast<std::size_t>(d) * kTokens);
  const QuantizeFn quantize = k->quantize_act[type_index(TensorType::kQ80)];
  quantize(wf.data(), static_cast<int>(wf.size()), gs, wq.data(), ws.data());
  quantize(xf.data(), n * kTokens, gs, xq.data(), xs.data());
  const Matrix m{TensorType::kQ80, d, n, wq.data(), ws.data(), gs, interleave_of(*k, TensorType::kQ80, gs)};
  const ActivationBatch a{xq.data(), xs.data(), n, gs, kTokens, static_cast<std::size_t>(n),
                          static_cast<std::size_t>(n / gs)};
  for (auto _ : state) {
    matmul_batch(*k, out.data(), static_cast<std::size_t>(d), m, a, d);
    benchmark::DoNotOptimize(out.data());
  }
  set_counters(state, double(d) * n * kTokens, double(d) * n * (1.0 + 4.0 / gs));
}

// Q8_0, Q4_0 or IQ4_XS weights (quantized from random floats, interleaved as the backend reads them)
// times Q8_0 activations: one token, or a prefill block of `tokens` through matmul_batch.
void BM_MatmulGgml(benchmark::State& state, const Kernels* k, TensorType type, int tokens) {
  const int d = static_cast<int>(state.range(0)), n = static_cast<int>(state.range(1));
  auto wf = random_floats(static_cast<std::size_t>(d) * n, 1);
  auto xf = random_floats(static_cast<std::size_t>(n) * tokens, 2);
  const std::size_t row = row_value_bytes(type, static_cast<std::size_t>(n), 0);
  const std::size_t xbytes = static_cast<std::size_t>(n / 32) * kQ8_0BlockBytes;
  std::vector<unsigned char> w(row * static_cast<std::size_t>(d)), packed(w.size());
  std::vector<unsigned char> x(xbytes * tokens);
  if (type == TensorType::kQ4_0)
    quantize_q4_0(wf.data(), wf.size(), w.data());
  else if (type == TensorType::kIQ4_XS)
    quantize_iq4_xs(wf.data(), wf.size(), w.data());
  else
    quantize_q8_0(wf.data(), wf.size(), w.data());
  k->quantize_act[type_index(TensorType::kQ8_0)](xf.data(), n * tokens, 32, x.data(), nullptr);
  const int il = interleave_of(*k, type, 0);
  packed = w;
  for (int r = 0; il > 1 && r + il <= d; r += il)
    type_traits(type).interleave_rows(packed.data() + static_cast<std::size_t>(r) * row, nullptr,
                                      w.data() + static_cast<std::size_t>(r) * row, nullptr, static_cast<std::size_t>(n),
                                      32, static_cast<std::size_t>(il));
  const Matrix m{type, d, n, packed.data(), nullptr, 0, il};
  const ActivationBatch a{x.data(), nullptr, n, 32, tokens, xbytes, 0};
  std::vector<float> out(static_cast<std::size_t>(d) * tokens);
  for (auto _ : state) {
    if (tokens == 1)
      k->matmul[type_index(type)](out.data(), m, a.at(0), d);
    else
      matmul_batch(*k, out.data(), static_cast<std::size_t>(d), m, a, d);
    benchmark::DoNotOptimize(out.data());
  }
  set_counters(state, double(d) * n * tokens, double(w.size()));
}

// The exp slot over a softmax's n = 32000 values x - max, uniform in [-20, 0]. The kernel works
// in place, so each iteration first copies the inputs back; exp/copy_only times that copy alone.
void BM_Exp(benchmark::State& state, const Kernels* k) {
  const int n = static_cast<int>(state.range(0));
  auto in = random_floats(static_cast<std::size_t>(n), 3);
  for (auto& v : in) v = 10.0f * v - 10.0f;  // [-1, 1) -> [-20, 0)
  std::vector<float> x(in.size());
  for (auto _ : state) {
    std::memcpy(x.data(), in.data(), in.size() * sizeof(float));
    if (k) k->exp(x.data(), n);
    benchmark::DoNotOptimize(x.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * n);
}

// {rows (out), cols (in)}: wq/wo, w1/w3, w2, classifier.
void shapes(benchmark::internal::Benchmark* b) {
  b->Args({288, 288})->Args({768, 288})->Args({288, 768})->Args({32000, 288});
}
// IQ4_XS needs rows of whole 256-value super-blocks: the stories110M shapes (dim 768, hidden_dim
// 2048) instead.
void shapes256(benchmark::internal::Benchmark* b) {
  b->Args({768, 768})->Args({2048, 768})->Args({768, 2048});
}

int register_all() {
  for (const char* const* name = pocketlm::kernel_names(); *name; ++name) {
    const Kernels* k = pocketlm::find_kernels(*name);
    if (!k) continue;
    benchmark::RegisterBenchmark((std::string("matmul_f32/") + *name).c_str(), BM_MatmulF32, k)->Apply(shapes);
    benchmark::RegisterBenchmark((std::string("matmul_q80/") + *name).c_str(), BM_MatmulQ80, k)->Apply(shapes);
    benchmark::RegisterBenchmark((std::string("matmul_q80_batch/") + *name).c_str(), BM_MatmulQ80Batch, k)
        ->Apply(shapes);
    for (int tokens : {1, 64}) {
      const std::string batch = tokens == 1 ? "/" : "_batch/";
      benchmark::RegisterBenchmark(("matmul_q8_0" + batch + *name).c_str(), BM_MatmulGgml, k, TensorType::kQ8_0, tokens)
          ->Apply(shapes);
      benchmark::RegisterBenchmark(("matmul_q4_0" + batch + *name).c_str(), BM_MatmulGgml, k, TensorType::kQ4_0, tokens)
          ->Apply(shapes);
    }
    benchmark::RegisterBenchmark((std::string("matmul_iq4_xs/") + *name).c_str(), BM_MatmulGgml, k, TensorType::kIQ4_XS, 1)
        ->Apply(shapes256);
    benchmark::RegisterBenchmark((std::string("exp/") + *name).c_str(), BM_Exp, k)->Arg(32000);
  }
  benchmark::RegisterBenchmark("exp/copy_only", BM_Exp, nullptr)->Arg(32000);
  return 0;
}
const int kRegistered = register_all();

}  // namespace

BENCHMARK_MAIN();
