// Helpers for the kernel tests: every backend this build and CPU run, and random operands.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "pocketlm/kernels/kernels.h"

namespace pocketlm::test {

// Every backend compiled in that this CPU can run.
inline std::vector<const Kernels*> available_backends() {
  std::vector<const Kernels*> out;
  for (const char* const* name = kernel_names(); *name; ++name)
    if (const Kernels* k = find_kernels(*name)) out.push_back(k);
  return out;
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

}  // namespace pocketlm::test
