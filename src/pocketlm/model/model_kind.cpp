#include "pocketlm/model/model_kind.h"

#include <cstring>

#include "pocketlm/format/ple_schema.h"

namespace pocketlm {

namespace {

constexpr ModelKind kLlama = {&kLlamaArchitecture, construct_model<LlamaModel>};
constexpr ModelKind kPle = {&kPleArchitecture, construct_model<PleModel>};
// The kinds compiled in, one row each (kModelObjectBytes names their classes).
constexpr const ModelKind* kBuiltIn[] = {&kLlama, &kPle};

constexpr int kMaxAdded = 4;
const ModelKind* g_added[kMaxAdded] = {};
int g_added_count = 0;

}  // namespace

Status find_model_kind(const char* file, const ModelSpec& spec, const ModelKind** kind) {
  for (const ModelKind* k : kBuiltIn) {
    if (std::strcmp(k->architecture->name, spec.architecture) == 0) {
      *kind = k;
      return Status();
    }
  }
  for (int i = 0; i < g_added_count; ++i) {
    if (std::strcmp(g_added[i]->architecture->name, spec.architecture) == 0) {
      *kind = g_added[i];
      return Status();
    }
  }
  char names[64];
  architecture_names(names, sizeof names);
  return Status::error(StatusCode::kUnsupported, "%s: architecture '%s' is not supported (pocketlm runs: %s)", file,
                       spec.architecture, names);
}

Status add_model_kind(const ModelKind* kind) {
  if (g_added_count == kMaxAdded)
    return Status::error(StatusCode::kUnsupported, "model kind '%s': at most %d can be added",
                         kind->architecture->name, kMaxAdded);
  POCKETLM_TRY(add_architecture(kind->architecture));
  g_added[g_added_count++] = kind;
  return Status();
}

}  // namespace pocketlm
