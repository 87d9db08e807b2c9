// Model kinds by architecture: the one place that maps ModelSpec::architecture to the class
// that runs it. A new kind is its architecture row (format/architecture.h: keys and roles), one
// file with its layers (a Decoder subclass, model/decoder.h) and one row here; a port or a test
// can add one at run time with add_model_kind.
#pragma once

#include <cstddef>
#include <new>

#include "pocketlm/format/architecture.h"
#include "pocketlm/model/llama.h"
#include "pocketlm/model/model.h"
#include "pocketlm/model/ple.h"

namespace pocketlm {

// The largest of the model classes T..., rounded up to 16 bytes.
template <typename... T>
constexpr std::size_t largest_model_bytes() {
  std::size_t largest = 0;
  ((largest = sizeof(T) > largest ? sizeof(T) : largest), ...);
  return (largest + 15) / 16 * 16;
}

// Room a Session keeps for the model object itself (the weights and state live in the arena):
// the largest of the kinds compiled in (their rows: model_kind.cpp). Mostly pointers and Matrix
// descriptors, so about half as much on 32-bit targets, where the planner keeps a measuring
// copy in a stack frame the bare-metal build bounds (-Wstack-usage). A kind added at run time
// must fit (construct_model checks).
inline constexpr std::size_t kModelObjectBytes = largest_model_bytes<LlamaModel, PleModel>();

struct ModelKind {
  const Architecture* architecture;  // its file schema; architecture->name selects it
  // Constructs the model in `memory` (kModelObjectBytes, 16-byte aligned); destroy it with
  // its virtual destructor.
  Model* (*construct)(void* memory);
};

// ModelKind::construct for a Model class T.
template <typename T>
Model* construct_model(void* memory) {
  static_assert(sizeof(T) <= kModelObjectBytes, "a kind added at run time is larger than the built-in ones");
  static_assert(alignof(T) <= 16, "model objects live in 16-byte aligned storage");
  return new (memory) T();
}

// The kind for `spec.architecture`, or an error (kUnsupported) naming it, the file and the kinds
// this build runs.
Status find_model_kind(const char* file, const ModelSpec& spec, const ModelKind** kind);

// Adds a kind and its architecture (format/architecture.h: add_architecture) for the rest of
// the process, before any session opens a model of it; `kind` and its architecture must outlive
// every session. Not thread-safe: call it at start-up. Errors: the name is taken, the table is
// full (kUnsupported).
Status add_model_kind(const ModelKind* kind);

}  // namespace pocketlm
