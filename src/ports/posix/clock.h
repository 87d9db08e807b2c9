// The host's monotonic clock, for SessionOptions::clock (the engine itself has no clock).
#pragma once

#include <cstdint>

namespace pocketlm {

// Nanoseconds since an arbitrary fixed point (std::chrono::steady_clock), for
// SessionOptions::clock (kMonotonicTicksPerSecond a second).
std::uint64_t monotonic_ticks();
inline constexpr std::uint64_t kMonotonicTicksPerSecond = 1000000000;

}  // namespace pocketlm
