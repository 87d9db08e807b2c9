#include "pocketlm/runtime/placement.h"

#include "pocketlm/format/tensor_role.h"

namespace pocketlm {

int placement_families(const ModelSpec& spec, std::size_t block_bytes, WeightPlacement out[kMaxPlacementFamilies]) {
  int n = 0;
  for (int table = 0; table < 2; ++table) {
    for (int cls = 0; cls < 2; ++cls) {
      // A shared classifier is the table: both in storage or neither.
      if (spec.shared_classifier ? cls != table : (cls && !spec.has(TensorRole::kWcls))) continue;
      WeightPlacement p;
      p.table_in_storage = table != 0;
      p.classifier_in_storage = !spec.shared_classifier && cls != 0;
      p.block_bytes = block_bytes;
      out[n++] = p;
    }
  }
  return n;
}

void assign_ram_tiers(MemoryPlan* plan) {
  int ram_tiers = 0;
  for (int t = 0; t < plan->tier_count(); ++t) ram_tiers += plan->tier(t).storage ? 0 : 1;
  if (ram_tiers < 2) return;
  // Hottest first (Heat); within one heat the smallest first, so that the fast tier holds as
  // many of the buffers a token touches as it can. Each goes to the fastest RAM tier with room,
  // else to the last (whose overflow the plan then reports).
  bool placed[MemoryPlan::kMaxRegions] = {};
  std::uint64_t used[MemoryPlan::kMaxTiers] = {};
  for (int i = 0; i < plan->size(); ++i)  // what is reserved stays where it is counted
    if (plan->region(i).reserved) used[plan->region(i).tier] += plan->region(i).bytes;
  for (;;) {
    int next = -1;
    for (int i = 0; i < plan->size(); ++i) {
      const PlanRegion& r = plan->region(i);
      if (placed[i] || r.reserved || plan->tier(r.tier).storage) continue;
      const PlanRegion* best = next < 0 ? nullptr : &plan->region(next);
      if (!best || r.heat > best->heat || (r.heat == best->heat && r.bytes < best->bytes)) next = i;
    }
    if (next < 0) return;
    placed[next] = true;
    const PlanRegion& r = plan->region(next);
    int last_ram = 0, chosen = -1;
    for (int t = 0; t < plan->tier_count(); ++t) {
      if (plan->tier(t).storage) continue;
      last_ram = t;
      const std::uint64_t cap = plan->tier(t).capacity;
      if (chosen < 0 && (cap == 0 || (used[t] <= cap && r.bytes <= cap - used[t]))) chosen = t;
    }
    if (chosen < 0) chosen = last_ram;
    used[chosen] += r.bytes;
    plan->set_region_tier(r.name, chosen);
  }
}

}  // namespace pocketlm
