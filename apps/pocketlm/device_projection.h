// `bench --device`: a device's decode tok/s projected from its profile (an estimate, never a
// measurement): per decode token, the multiply-adds at the profile's compute rate, the bytes
// read from each memory tier that has a bandwidth in the profile (weights where the plan put
// them, the token's embedding row, the kv cache at the mean decode position), and the storage
// bytes and seeks the run counted.
#pragma once

#include <string>

#include "pocketlm/format/model_spec.h"
#include "pocketlm/memory/memory_plan.h"
#include "pocketlm/runtime/device_profile.h"

namespace pocketlm::cli {

struct TierRead {
  const char* tier = "";
  double bytes = 0;         // per decode token
  double bytes_per_s = 0;   // 0: the profile gives no bandwidth (not counted)
  double seconds = 0;
};

struct DeviceProjection {
  bool known = false;       // false: the profile has no compute rate
  double macs = 0;          // multiply-adds per token
  double compute_s = 0;     // macs / the profile's rate
  TierRead tiers[MemoryPlan::kMaxTiers];
  int tier_count = 0;
  double storage_seeks = 0;  // per decode token, counted
  double token_s = 0;
  double tok_per_s = 0;
  bool overlap = false;     // storage reads overlap compute (max instead of a sum)
};

// Multiply-adds of one token's forward pass: every matrix element once (attention over the
// context is left out: a few percent at these sizes).
double macs_per_token(const ModelSpec& spec);

// The projection for one decode token of `spec` planned as `plan` on `device`; storage figures
// are the run's counted decode bytes and seeks per token; `mean_position` is the average
// position of a decode pass (its kv cache reads).
DeviceProjection project_decode(const DeviceProfile& device, const MemoryPlan& plan, const ModelSpec& spec,
                                int seq_len, double storage_bytes, double storage_seeks, double mean_position);

// "12.3 on esp32s3 (estimate per decode token: ...)" for bench's table.
std::string projection_text(const DeviceProfile& device, const DeviceProjection& p);

}  // namespace pocketlm::cli
