// A device profile: the memory tiers of a target (capacity, RAM or storage) and the read model
// of each (bandwidth, per-read latency, whether reads overlap compute), plus a compute-rate
// estimate, each with its source. The planner fits a model into a profile's tiers
// (runtime/placement.h); `bench --device` projects tok/s from the read model. Profiles are
// data the caller passes in: the CLI's are JSON files (apps/pocketlm/devices/, --device-file),
// a port's is its own.
#pragma once

#include <cstdint>

#include "pocketlm/memory/memory_plan.h"

namespace pocketlm {

struct DeviceTier {
  const char* name;
  bool storage;                 // read on demand (no RAM)
  std::uint64_t capacity;       // bytes; 0 = unbounded
  double read_bytes_per_s;      // sustained read bandwidth (RAM too); 0 = not a limit the estimate counts
  double read_latency_s;        // storage: cost of one read call (seek, command)
  bool reads_overlap_compute;   // storage: a read can run while the CPU computes
  const char* source;           // where the figures come from
  // Storage: bytes of the medium that are not the model's (the firmware: bootloader, partition
  // table, the app itself), checked with the model file against the capacity.
  std::uint64_t reserved_bytes;
  const char* reserved_source;
};

struct DeviceProfile {
  const char* name;  // --device NAME
  const char* description;
  DeviceTier tiers[MemoryPlan::kMaxTiers];  // RAM tiers fastest first, then at most one storage tier
  int tier_count;
  double macs_per_s;  // compute estimate for projections (multiply-adds per second); 0 = unknown
  const char* compute_source;
  // The display the console draws on (ui/console.h), pixels; 0 = none (a host uses its terminal).
  int screen_width;
  int screen_height;
  const char* screen_source;
  // The kernel backend the device runs (plans and projections use its layouts and scratch
  // unless --kernels names another); nullptr: this CPU's fastest (the host).
  const char* kernels;
};

// The profile's tiers in the form a MemoryPlan takes.
void plan_tiers(const DeviceProfile& device, MemoryPlan* plan);
// The storage tier of a profile, or nullptr.
const DeviceTier* storage_tier(const DeviceProfile& device);

}  // namespace pocketlm
