#include "ports/posix/clock.h"

#include <chrono>

namespace pocketlm {

double monotonic_seconds() {
  using Clock = std::chrono::steady_clock;
  return std::chrono::duration<double>(Clock::now().time_since_epoch()).count();
}

}  // namespace pocketlm
