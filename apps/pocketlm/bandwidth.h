// The machine's streaming read bandwidth, measured in the process that benchmarks decode, so
// that `bench` can say how close decode comes to the memory limit (decode of a model larger
// than the caches reads every weight byte once per token: memory-bound).
#pragma once

namespace pocketlm::cli {

struct Bandwidth {
  double gb_per_s = 0.0;  // 1e9 bytes per second, best pass
  double buffer_mib = 0.0;
  int threads = 0;
  const char* loop = "";  // the read loop used: "avx2" or "scalar"
};

// `threads` workers each read their own slice of one buffer of `mib` MiB (larger than any
// last-level cache), summing it with the widest vector loads this CPU has; the result is the
// best of `passes` passes, each timed from a common start to the last worker's end.
Bandwidth measure_read_bandwidth(int threads, int mib = 64, int passes = 5);

}  // namespace pocketlm::cli
