// llama2.c's random number generator: 64-bit xorshift* (Marsaglia's xorshift with a
// multiplicative output, Vigna 2016), returning the high 32 bits of the product.
#pragma once

#include <cstdint>

namespace pocketlm {

class Rng {
 public:
  explicit Rng(std::uint64_t seed = 1) : state_(seed) {}

  std::uint32_t next_u32() {
    state_ ^= state_ >> 12;
    state_ ^= state_ << 25;
    state_ ^= state_ >> 27;
    return static_cast<std::uint32_t>((state_ * 0x2545F4914F6CDD1Dull) >> 32);
  }
  // A float in [0, 1) with 24 random bits: (u32 >> 8) / 2^24.
  float next_f32() { return static_cast<float>(next_u32() >> 8) / 16777216.0f; }

  std::uint64_t state() const { return state_; }

 private:
  std::uint64_t state_;
};

}  // namespace pocketlm
