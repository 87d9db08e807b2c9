// The C API's no-session error (pocketlm_last_error(NULL)), shared by its files.
#pragma once

#include <cstddef>

#include "pocketlm/api/pocketlm.h"
#include "pocketlm/base/status.h"

namespace pocketlm::api {

// Keeps st's message as the no-session error ("" when ok) and returns its C code.
pocketlm_status global_status(const Status& st);
// The first POCKETLM_ALIGNMENT-aligned address of memory[0..bytes) into *at, when an object of
// object_bytes fits from there.
bool align_within(void* memory, std::size_t bytes, std::size_t object_bytes, void** at);

}  // namespace pocketlm::api
