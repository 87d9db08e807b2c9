// Helpers for the kernel tests: every backend this build and CPU run, and random operands.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "pocketlm/kernels/kernels.h"
#include "pocketlm/quant/q80_interleave.h"

namespace pocketlm {
#if defined(__x86_64__)
const Kernels& avx512_kernels();  // kernels/avx512.cpp: "avx512" on a CPU without AVX512_VNNI
#endif
}  // namespace pocketlm

namespace pocketlm::test {

// Every backend compiled in that this CPU can run. On a CPU with AVX512_VNNI, "avx512" is the
// vpdpbusd table; the vpmaddubsw one that CPUs without VNNI get is added too, so that both
// are tested wherever the CPU can run them.
inline std::vector<const Kernels*> available_backends() {
  std::vector<const Kernels*> out;
  for (const char* const* name = kernel_names(); *name; ++name)
    if (const Kernels* k = find_kernels(*name)) out.push_back(k);
#if defined(__x86_64__)
  const Kernels* avx512 = find_kernels("avx512");
  if (avx512 && avx512 != &avx512_kernels()) out.push_back(&avx512_kernels());
#endif
  return out;
}

// A test name for backend k, unique among available_backends(): its name, and
// "avx512_maddubs" for the vpmaddubsw table where the VNNI one is "avx512".
inline std::string backend_test_name(const Kernels* k) {
#if defined(__x86_64__)
  if (k == &avx512_kernels() && find_kernels("avx512") != k) return "avx512_maddubs";
#endif
  return k->name;
}

// n floats uniform in [-scale, scale].
inline std::vector<float> random_floats(std::size_t n, std::mt19937& rng, float scale = 1.0f) {
  std::uniform_real_distribution<float> dist(-scale, scale);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

// n int8 values over the whole range (weights may hold -128).
inline std::vector<std::int8_t> random_int8(std::size_t n, std::mt19937& rng) {
  std::uniform_int_distribution<int> dist(-128, 127);
  std::vector<std::int8_t> v(n);
  for (auto& x : v) x = static_cast<std::int8_t>(dist(rng));
  return v;
}

// A [d, n] q8_0 matrix (values wq, one scale per gs in ws) laid out as `k` stores it: full blocks
// of interleave_of(k, q80, gs) rows interleaved, the d % il tail row-major. Returns il.
inline int interleave_q80_for(const Kernels& k, const std::vector<std::int8_t>& wq, const std::vector<float>& ws,
                              int d, int n, int gs, std::vector<std::int8_t>* pq, std::vector<float>* ps) {
  const int il = interleave_of(k, TensorType::kQ80, gs);
  *pq = wq;
  *ps = ws;
  const auto sn = static_cast<std::size_t>(n), sgs = static_cast<std::size_t>(gs);
  for (int r = 0; r + il <= d && il > 1; r += il) {
    const auto sr = static_cast<std::size_t>(r);
    interleave_q80_block(pq->data() + sr * sn, ps->data() + sr * sn / sgs, wq.data() + sr * sn,
                         ws.data() + sr * sn / sgs, sn, sgs, static_cast<std::size_t>(il));
  }
  return il;
}

}  // namespace pocketlm::test
