// The machine's read bandwidth, measured in the process that benchmarks decode, so that `bench`
// can say how close decode comes to the limit of the memory tier its weights live in. Decode
// reads every weight byte once per token: weights that fit the last-level cache stream from it,
// larger ones from DRAM, and the two rates differ by 2-3x. Neither the cache size the CPU
// reports nor a single buffer size is trusted (cpuid reports 320-508 MiB of L3 on VMs whose
// caches hold 32): a sweep over buffer sizes finds where reads leave the cache.
#pragma once

#include <memory>
#include <vector>

namespace pocketlm::cli {

// Read rate of one buffer size: the median of the sweep's timed passes. Not the best: on a
// shared VM single passes of a 256 MiB buffer ranged 32-42 GB/s (median 33) while 2 GiB
// streamed at 31-34, so the best pass measured the moments a host's cache held more of it.
struct SweepPoint {
  double mib = 0.0;
  double gb_per_s = 0.0;  // 1e9 bytes per second
};

struct BandwidthSweep {
  std::vector<SweepPoint> points;  // ascending size
  int threads = 0;
  const char* loop = "";  // the read loop used: "avx512", "avx2" or "scalar"
  // The last-level cache's knee: the largest size whose rate is still at least halfway from the
  // DRAM rate to the cache plateau (the best rate at 4 MiB and above, past every L2), and the
  // rate measured there. Weights smaller than the knee are read from cache at up to llc_gb_per_s.
  double knee_mib = 0.0;
  double llc_gb_per_s = 0.0;
  // The streaming rate from DRAM: the rate at the largest size, which is at least 8x the knee.
  double dram_mib = 0.0;
  double dram_gb_per_s = 0.0;
  double seconds = 0.0;  // the whole probe, allocation included
};

// `threads` workers each read their own slice of one buffer, with the widest vector loads this
// CPU has, for buffers of 1 MiB doubling to 128 MiB, then on (up to 1 GiB and a quarter of the
// machine's memory) until sweep_reached_dram. Each size is read in passes of at least 32 MiB (a
// small buffer over and over), the median of `passes` (odd), each timed from a common start to
// the last worker's end.
BandwidthSweep sweep_read_bandwidth(int threads, int passes = 7);

// Fills the knee, llc and dram figures of sweep->points (ascending, at least one).
void find_limits(BandwidthSweep* sweep);

// find_limits, then whether the largest size so far reads from DRAM alone: at most 0.6 of the
// cache plateau, at least 8x the knee, and the last two doublings each no more than 10 %
// slower (a cache larger than the knee's, or a host's, can still serve part of a buffer 8x the
// knee).
bool sweep_reached_dram(BandwidthSweep* sweep);

// A read-rate probe of one buffer (the sweep's DRAM size) kept for repeated measurements: bench
// reads it between decode runs, so that decode is compared with the memory's rate of the same
// minute (on a shared VM it drifts by a fifth within minutes). The buffer is allocated and
// touched once; ok() is false when it could not be, or is under 32 MiB.
class ReadProbe {
 public:
  ReadProbe(int threads, double mib);
  ~ReadProbe();
  ReadProbe(const ReadProbe&) = delete;
  ReadProbe& operator=(const ReadProbe&) = delete;
  bool ok() const;
  // The median GB/s (1e9 bytes per second) of `passes` (at least 1) reads of the whole buffer.
  double gb_per_s(int passes = 3);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Decode's fraction of the read rate measured around it: for each run r, bytes_per_token x
// passes[r] / seconds[r] over the mean of probes[r] and probes[r + 1] (the probes just before
// and after it), then the median over runs. 0 when no run has passes, time and both probes.
double paired_fraction(double bytes_per_token, const std::vector<int>& passes, const std::vector<double>& seconds,
                       const std::vector<double>& probes);

// The tier `weight_bytes` stream from (the cache below the knee, else DRAM) and its rate.
struct ReadLimit {
  const char* tier = "";  // "llc" or "dram"
  double gb_per_s = 0.0;
};
ReadLimit read_limit_for(const BandwidthSweep& sweep, double weight_bytes);

}  // namespace pocketlm::cli
