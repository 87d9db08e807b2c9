// Helpers for the kernel tests: every backend this build and CPU run, and random operands.
#pragma once

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "pocketlm/kernels/kernels.h"
#include "pocketlm/quant/fp16.h"
#include "pocketlm/quant/tensor_type.h"
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

// Random ggml blocks of `type` for a [d, n] matrix: scales of varied magnitude (subnormal halves
// included), every value byte possible (Q8_0's -128 too; every IQ4_XS sub-block scale).
inline std::vector<unsigned char> random_blocks(TensorType type, int d, int n, std::mt19937& rng) {
  const int be = block_elements(type, 0);
  const std::size_t bs = row_value_bytes(type, static_cast<std::size_t>(be), 0);
  std::vector<unsigned char> w(static_cast<std::size_t>(d) * static_cast<std::size_t>(n / be) * bs);
  std::uniform_int_distribution<int> byte(0, 255);
  std::uniform_real_distribution<float> mag(-12.0f, 2.0f);
  for (std::size_t b = 0; b < w.size() / bs; ++b) {
    unsigned char* blk = w.data() + b * bs;
    float scale = std::pow(2.0f, mag(rng)) * (byte(rng) & 1 ? -1.0f : 1.0f);
    if (b % 17 == 5) scale = 3e-6f;  // a subnormal half
    store_fp16(blk, fp32_to_fp16(scale));
    for (std::size_t i = 2; i < bs; ++i) blk[i] = static_cast<unsigned char>(byte(rng));
  }
  return w;
}

// The weights as backend k stores them: the traits' load-time interleave, block by block.
inline std::vector<unsigned char> pack_blocks(const Kernels& k, TensorType type, const std::vector<unsigned char>& w,
                                              int d, int n, int* il) {
  *il = interleave_of(k, type, 0);
  std::vector<unsigned char> packed = w;
  const std::size_t rb = row_value_bytes(type, static_cast<std::size_t>(n), 0);
  for (int r = 0; *il > 1 && r + *il <= d; r += *il)
    type_traits(type).interleave_rows(packed.data() + static_cast<std::size_t>(r) * rb, nullptr,
                                      w.data() + static_cast<std::size_t>(r) * rb, nullptr, static_cast<std::size_t>(n),
                                      32, static_cast<std::size_t>(*il));
  return packed;
}

}  // namespace pocketlm::test
