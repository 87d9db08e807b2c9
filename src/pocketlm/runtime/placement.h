// Choosing what stays in storage. Row-fetching the embedding table costs one row per token; a
// streamed layer or classifier costs all its bytes every token. For each way of placing the
// table and the classifier (a family), the session streams the fewest last layers that make
// the plan fit the RAM tiers, and keeps the family whose fitting placement reads the fewest
// storage bytes per token (runtime/session.cpp).
#pragma once

#include "pocketlm/format/model_spec.h"
#include "pocketlm/memory/memory_plan.h"
#include "pocketlm/model/weight_placement.h"

namespace pocketlm {

inline constexpr int kMaxPlacementFamilies = 4;

// Fills out[0..n) with the families (no layer streamed yet; n returned), out[0] keeping
// everything in RAM.
int placement_families(const ModelSpec& spec, std::size_t block_bytes, WeightPlacement out[kMaxPlacementFamilies]);

// Assigns the RAM regions of `plan` to its RAM tiers by a rule, not by name: hottest first
// (PlanRegion::heat: what every token touches many times, then what it reads once, then one row
// of, then what only loading and encoding touch), the smallest first within a heat, each to the
// fastest tier that still holds it; a region that fits no tier goes to the last RAM tier.
void assign_ram_tiers(MemoryPlan* plan);

}  // namespace pocketlm
