// Choosing what stays in storage, tensor by tensor. Leaving a tensor in storage frees its
// bytes of RAM and costs bytes read per token (stored_bytes_per_token: one row of a row-gather
// table, a whole matrix). When the plan overflows its RAM tiers, the session asks for the
// shortfall to be shed (runtime/session.cpp), measures again (streaming adds its buffers) and
// repeats until the plan fits or nothing is left to shed.
#pragma once

#include "pocketlm/format/model_spec.h"
#include "pocketlm/kernels/kernels.h"
#include "pocketlm/memory/memory_plan.h"
#include "pocketlm/model/weight_placement.h"

namespace pocketlm {

// Leaves more tensors of `spec` in storage in *placement, so that at least `shortfall` bytes
// of RAM are freed if it can, at few bytes read per token. A streamed matrix costs about the
// bytes it frees, so the aim is not to overshoot: row-gather tables go first (one row per
// token each); then matrices, the largest first and later layers and roles first at equal
// size, each taken only if it frees no more than is still short (a table that is also the
// classifier counts as a matrix); what is left, the cheapest tensor that covers it alone.
// Streaming needs read buffers sized by the largest block streamed (model/weight_stream.h:
// stream_block under `kernels`), so this is tried for each block size as a limit, counting
// those buffers, and the try that reads the fewest bytes per token is kept. When none frees
// enough, the placement that needs the least RAM is taken (every tensor up to the block size
// that frees the most net of its buffers), so the plan then reports the least memory the model
// runs in. Returns false when no tensor was moved.
bool shed_weights(const ModelSpec& spec, const Kernels& kernels, std::uint64_t shortfall, WeightPlacement* placement);

// Assigns the RAM regions of `plan` to its RAM tiers by a rule, not by name: hottest first
// (PlanRegion::heat: what every token touches many times, then what it reads once, then one row
// of, then what only loading and encoding touch), the smallest first within a heat, each to the
// fastest tier that still holds it; a region that fits no tier goes to the last RAM tier.
void assign_ram_tiers(MemoryPlan* plan);

}  // namespace pocketlm
