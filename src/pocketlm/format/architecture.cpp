#include "pocketlm/format/architecture.h"

#include <cstring>

#include "pocketlm/base/format.h"

namespace pocketlm {

namespace {

constexpr std::uint32_t kLlamaRequired =
    role_bit(TensorRole::kTokenEmbedding) | role_bit(TensorRole::kRmsAtt) | role_bit(TensorRole::kWq) |
    role_bit(TensorRole::kWk) | role_bit(TensorRole::kWv) | role_bit(TensorRole::kWo) | role_bit(TensorRole::kRmsFfn) |
    role_bit(TensorRole::kW1) | role_bit(TensorRole::kW2) | role_bit(TensorRole::kW3) | role_bit(TensorRole::kRmsFinal);

// llama.cpp's LLM_ARCH_LLAMA keys; head_count_kv defaults to head_count, vocab_size to the
// embedding table's rows (both checked where they are known).
constexpr Architecture kLlama = {
    "llama",
    {{"embedding_length", ConfigField::kDim, true},
     {"feed_forward_length", ConfigField::kHiddenDim, true},
     {"block_count", ConfigField::kLayers, true},
     {"attention.head_count", ConfigField::kHeads, true},
     {"attention.head_count_kv", ConfigField::kKvHeads, false},
     {"context_length", ConfigField::kSeqLen, true},
     {"vocab_size", ConfigField::kVocab, false}},
    7,
    kLlamaRequired | role_bit(TensorRole::kWcls),  // output.weight: absent when tied to the embedding
    kLlamaRequired,
};

// A kind that extends `base`: its keys plus `key`, its roles plus `roles` (all required).
constexpr Architecture extend(const Architecture& base, const char* name, ArchitectureKey key, std::uint32_t roles) {
  Architecture a = base;
  a.name = name;
  a.keys[a.key_count++] = key;
  a.roles |= roles;
  a.required |= roles;
  return a;
}

// pocketlm's per-layer-embedding models (model/ple.h): llama's keys and tensors under its own
// prefix, P from embedding_length_per_layer_input, and the PLE tensors.
constexpr Architecture kPle = extend(
    kLlama, "pocketlm-ple", {"embedding_length_per_layer_input", ConfigField::kPerLayerDim, true},
    role_bit(TensorRole::kPleTable) | role_bit(TensorRole::kPleProj) | role_bit(TensorRole::kPleProjNorm) |
        role_bit(TensorRole::kPleGate) | role_bit(TensorRole::kPleOut) | role_bit(TensorRole::kPlePostNorm));

constexpr const Architecture* kBuiltIn[] = {&kLlama, &kPle};

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
    case ConfigField::kPerLayerDim: return &c->per_layer_dim;
    default: return &c->kind_params[static_cast<int>(f) - static_cast<int>(ConfigField::kKindParam0)];
  }
}

const char* config_field_name(ConfigField f) {
  static const char* const kNames[] = {"dim",           "hidden_dim",     "n_layers",       "n_heads",
                                       "n_kv_heads",    "seq_len",        "vocab_size",     "per_layer_dim",
                                       "kind_params[0]", "kind_params[1]", "kind_params[2]", "kind_params[3]"};
  static_assert(sizeof kNames / sizeof *kNames == static_cast<int>(ConfigField::kKindParam3) + 1);
  return kNames[static_cast<int>(f)];
}

const Architecture& llama_architecture() { return kLlama; }
const Architecture& ple_architecture() { return kPle; }

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
