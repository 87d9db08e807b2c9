// SplitMix64: the generator behind `pocketlm synth`. shared/spec/synthetic-models.md fixes
// it bit for bit so that any machine rebuilds the same checkpoint bytes from a seed; the
// draws need to be reproducible, not statistically strong.
#pragma once

#include <cstdint>

namespace pocketlm::cli {

class SplitMix64 {
 public:
  explicit SplitMix64(std::uint64_t seed) : state_(seed) {}

  std::uint64_t next() {
    state_ += 0x9E3779B97F4A7C15ull;  // wraps mod 2^64
    std::uint64_t z = state_;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }

  // f = 2u - 1 in [-1, 1) with u = (top 24 bits) * 2^-24. Every step is exact in float32
  // (24-bit integers, power-of-two scaling), so no compiler flag can change the result.
  float next_signed_unit() {
    const float u = static_cast<float>(next() >> 40) * 0x1p-24f;
    return 2.0f * u - 1.0f;
  }

 private:
  std::uint64_t state_;
};

}  // namespace pocketlm::cli
