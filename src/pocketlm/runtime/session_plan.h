// The regions of a session's memory plan, in the order the plan table prints them, with a
// note that says what each holds for this model.
#pragma once

#include <cstddef>

#include "pocketlm/base/status.h"
#include "pocketlm/format/model_spec.h"
#include "pocketlm/memory/memory_plan.h"
#include "pocketlm/model/blocks.h"
#include "pocketlm/model/weight_placement.h"

namespace pocketlm {

inline constexpr const char* kProcessRegion = "process (reserved)";

// Adds every RAM region with 0 bytes and its note (the measuring arena then fills in the
// bytes), and the weights `placement` keeps in storage with their bytes (the plan must have a
// storage tier when it keeps any). prefill_batch > 1 adds the batched prefill's activations
// (and, with batched_attention, the scores of Kernels::attention_batch).
Status describe_session_regions(const ModelSpec& spec, const WeightPlacement& placement, int seq_len, KvType kv,
                                int prefill_batch, bool batched_attention, std::size_t io_chunk_bytes,
                                MemoryPlan* plan);

}  // namespace pocketlm
