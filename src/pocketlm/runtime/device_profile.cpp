#include "pocketlm/runtime/device_profile.h"

#include <cstring>

#include "pocketlm/base/format.h"

namespace pocketlm {

void plan_tiers(const DeviceProfile& device, MemoryPlan* plan) {
  PlanTier tiers[MemoryPlan::kMaxTiers] = {};
  for (int i = 0; i < device.tier_count; ++i) {
    format_to(tiers[i].name, sizeof tiers[i].name, "%s", device.tiers[i].name);
    tiers[i].storage = device.tiers[i].storage;
    tiers[i].capacity = device.tiers[i].capacity;
    tiers[i].reserved = device.tiers[i].reserved_bytes;
  }
  plan->set_tiers(tiers, device.tier_count);
}

const DeviceTier* storage_tier(const DeviceProfile& device) {
  for (int i = 0; i < device.tier_count; ++i)
    if (device.tiers[i].storage) return &device.tiers[i];
  return nullptr;
}

}  // namespace pocketlm
