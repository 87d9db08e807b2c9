// A board's 32-bit cycle or tick counter (CCOUNT, CP0 Count) read as a 64-bit count: each reading
// adds its distance from the one before, modulo 2^32, so the count is right as long as it is read
// at least once a wrap (the engine reads the clock at every pass).
#pragma once

#include <cstdint>

namespace pocketlm::firmware {

class Counter64 {
 public:
  // Counting starts from the hardware's value `now`.
  void start(std::uint32_t now) {
    last_ = now;
    total_ = 0;
  }
  // Ticks since start(), given the hardware's value now.
  std::uint64_t read(std::uint32_t now) {
    total_ += static_cast<std::uint32_t>(now - last_);
    last_ = now;
    return total_;
  }

 private:
  std::uint32_t last_ = 0;
  std::uint64_t total_ = 0;
};

}  // namespace pocketlm::firmware
