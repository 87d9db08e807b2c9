// Model kinds by architecture name: the one place that maps ModelSpec::architecture to the
// class that runs it. A new kind is one file (its forward pass) and one row here.
#pragma once

#include <cstddef>

#include "pocketlm/model/model.h"

namespace pocketlm {

// Room a Session keeps for the model object itself (the weights and state live in the arena).
// Mostly pointers and Matrix descriptors, so half as much on 32-bit targets, where the planner
// keeps a measuring copy in a stack frame the bare-metal build bounds (-Wstack-usage).
inline constexpr std::size_t kModelObjectBytes = sizeof(void*) >= 8 ? 1120 : 768;

struct ModelKind {
  const char* architecture;  // "llama", ...
  // Constructs the model in `memory` (kModelObjectBytes, 16-byte aligned); destroy it with
  // its virtual destructor.
  Model* (*construct)(void* memory);
};

// The kind for `spec.architecture`, or an error (kUnsupported) naming it and the file.
Status find_model_kind(const char* file, const ModelSpec& spec, const ModelKind** kind);

}  // namespace pocketlm
