#include "pocketlm/model/model_kind.h"

#include <cstring>
#include <new>

#include "pocketlm/model/llama.h"

namespace pocketlm {

namespace {

template <typename T>
Model* construct(void* memory) {
  static_assert(sizeof(T) <= kModelObjectBytes, "raise kModelObjectBytes");
  static_assert(alignof(T) <= 16, "model objects live in 16-byte aligned storage");
  return new (memory) T();
}

const ModelKind kKinds[] = {
    {"llama", construct<LlamaModel>},
};

}  // namespace

Status find_model_kind(const char* file, const ModelSpec& spec, const ModelKind** kind) {
  for (const ModelKind& k : kKinds) {
    if (std::strcmp(k.architecture, spec.architecture) == 0) {
      *kind = &k;
      return Status();
    }
  }
  return Status::error(StatusCode::kUnsupported, "%s: architecture '%s' is not supported (pocketlm runs: llama)",
                       file, spec.architecture);
}

}  // namespace pocketlm
