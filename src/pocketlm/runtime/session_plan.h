// The regions of a session's memory plan, in the order the plan table prints them, with a
// note that says what each holds for this model.
#pragma once

#include <cstddef>

#include "pocketlm/base/status.h"
#include "pocketlm/format/model_spec.h"
#include "pocketlm/memory/memory_plan.h"

namespace pocketlm {

inline constexpr const char* kPaddingRegion = "alignment padding";

// Adds every region with 0 bytes and its note; the measuring arena then fills in the bytes.
Status describe_session_regions(const ModelSpec& spec, int seq_len, std::size_t io_chunk_bytes, MemoryPlan* plan);

}  // namespace pocketlm
