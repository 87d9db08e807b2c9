// The host's monotonic clock, for SessionOptions::clock (the engine itself has no clock).
#pragma once

namespace pocketlm {

// Seconds since an arbitrary fixed point (std::chrono::steady_clock).
double monotonic_seconds();

}  // namespace pocketlm
