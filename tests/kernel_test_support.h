// Helpers for the kernel tests: every backend this build and CPU run, and random operands.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "pocketlm/kernels/kernels.h"
#include "pocketlm/quant/q80_interleave.h"

namespace pocketlm::test {

// Every table this build and CPU run (kernels/registry.cpp's kernel_variants(): the backends,
// and avx512's vpmaddubsw table where the CPU's "avx512" is the vpdpbusd one).
inline std::vector<const Kernels*> available_backends() {
  std::vector<const Kernels*> out;
  for (const KernelVariant* v = kernel_variants(); v->name; ++v) out.push_back(v->kernels);
  return out;
}

// A test name for backend k, unique among available_backends(): its variant's name.
inline std::string backend_test_name(const Kernels* k) {
  for (const KernelVariant* v = kernel_variants(); v->name; ++v)
    if (v->kernels == k) return v->name;
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
