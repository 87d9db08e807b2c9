#include "ports/posix/clock.h"

#include <chrono>

namespace pocketlm {

std::uint64_t monotonic_ticks() {
  using Clock = std::chrono::steady_clock;
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count());
}

}  // namespace pocketlm
