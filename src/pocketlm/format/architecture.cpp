#include "pocketlm/format/architecture.h"

#include <cstring>

#include "pocketlm/base/format.h"
#include "pocketlm/format/ple_schema.h"

namespace pocketlm {

namespace {

constexpr const Architecture& kLlama = kLlamaArchitecture;

// The kinds compiled in: one row each (a kind's own architecture row is in its schema file).
constexpr const Architecture* kBuiltIn[] = {&kLlama, &kPleArchitecture};

constexpr int kMaxAdded = 4;
const Architecture* g_added[kMaxAdded] = {};
int g_added_count = 0;

}  // namespace

int* config_field(ModelConfig* c, ConfigField f) {
  switch (f) {
    case ConfigField::kDim: return &c->dim;
    case ConfigField::kHiddenDim: return &c->hidden_dim;
    case ConfigField::kLayers: return &c->n_layers;
    case ConfigField::kHeads: return &c->n_heads;
    case ConfigField::kKvHeads: return &c->n_kv_heads;
    case ConfigField::kSeqLen: return &c->seq_len;
    case ConfigField::kVocab: return &c->vocab_size;
    default: return &c->kind_params[static_cast<int>(f) - static_cast<int>(ConfigField::kKindParam0)];
  }
}

const char* config_field_name(const Architecture& arch, ConfigField f) {
  static const char* const kNames[] = {"dim",           "hidden_dim",     "n_layers",       "n_heads",
                                       "n_kv_heads",    "seq_len",        "vocab_size",     "kind_params[0]",
                                       "kind_params[1]", "kind_params[2]", "kind_params[3]"};
  static_assert(sizeof kNames / sizeof *kNames == static_cast<int>(ConfigField::kKindParam3) + 1);
  const int i = static_cast<int>(f) - static_cast<int>(ConfigField::kKindParam0);
  if (i >= 0 && arch.param_names[i]) return arch.param_names[i];
  return kNames[static_cast<int>(f)];
}

const Architecture& llama_architecture() { return kLlama; }

const RoleInfo& role_info(const Architecture& arch, TensorRole role) {
  return is_kind_role(role) ? arch.kind_roles[kind_role_index(role)] : role_info(role);
}

int forward_index(const Architecture& arch, TensorRole role) {
  for (int i = 0; i < arch.forward_count; ++i)
    if (arch.forward[i] == role) return i;
  return -1;
}

bool read_before_layers(const Architecture& arch, TensorRole role) {
  if (is_per_layer(role)) return false;
  for (int i = 0; i < arch.forward_count; ++i) {
    if (arch.forward[i] == role) return true;
    if (is_per_layer(arch.forward[i])) return false;
  }
  return false;
}

const Architecture* find_architecture(const char* name) {
  for (const Architecture* a : kBuiltIn)
    if (std::strcmp(name, a->name) == 0) return a;
  for (int i = 0; i < g_added_count; ++i)
    if (std::strcmp(name, g_added[i]->name) == 0) return g_added[i];
  return nullptr;
}

void architecture_names(char* out, std::size_t cap) {
  std::size_t used = 0;
  for (const Architecture* a : kBuiltIn)
    if (used < cap) used += format_to(out + used, cap - used, "%s%s", used ? ", " : "", a->name);
  for (int i = 0; i < g_added_count && used < cap; ++i) used += format_to(out + used, cap - used, ", %s", g_added[i]->name);
}

Status add_architecture(const Architecture* arch) {
  if (find_architecture(arch->name))
    return Status::error(StatusCode::kUnsupported, "architecture '%s' is already known", arch->name);
  if (g_added_count == kMaxAdded)
    return Status::error(StatusCode::kUnsupported, "architecture '%s': at most %d can be added", arch->name, kMaxAdded);
  g_added[g_added_count++] = arch;
  return Status();
}

}  // namespace pocketlm
