// Architectures: what a model kind's file says and holds, as data. Per kind: its GGUF
// `general.architecture` name (the prefix of its hyperparameter keys, `llama.block_count`), which
// keys fill which config fields (the Llama-family ones every kind shares, and the kind's own
// hyperparameters, into ModelConfig::kind_params, each with the name the kind gives it), the
// tensor roles its files may hold, and which of those are required. The GGUF reader reads the architecture from the file and fills
// the config from its row; llama2.c files are `llama`. The model kind registry
// (model/model_kind.h) maps the same name to the class that runs it.
#pragma once

#include <cstddef>
#include <cstdint>

#include "pocketlm/base/status.h"
#include "pocketlm/format/model_spec.h"
#include "pocketlm/format/tensor_role.h"

namespace pocketlm {

// Config fields a GGUF key can fill (format/model_spec.h: ModelConfig).
enum class ConfigField : std::uint8_t {
  kDim, kHiddenDim, kLayers, kHeads, kKvHeads, kSeqLen, kVocab,
  kKindParam0, kKindParam1, kKindParam2, kKindParam3,  // ModelConfig::kind_params[0..3]
};
static_assert(kMaxKindParams == 4, "one ConfigField per kind parameter");

// One integer hyperparameter key: `<architecture>.<suffix>`.
struct ArchitectureKey {
  const char* suffix;  // "block_count", "attention.head_count", ...
  ConfigField field;
  bool required;       // absent and not required: the field keeps its fallback
};

inline constexpr int kMaxArchitectureKeys = 12;

// The bit of a role in a role set (Architecture::roles, ::required).
constexpr std::uint32_t role_bit(TensorRole role) { return std::uint32_t{1} << static_cast<int>(role); }
static_assert(kTensorRoleCount <= 32, "role sets are 32-bit masks");

struct Architecture {
  const char* name;  // general.architecture: "llama"
  // Integer keys, in the order they are checked (the shared ones first). The float keys
  // (attention.layer_norm_rms_epsilon, rope.freq_base) and rope.dimension_count and
  // rope.scaling.type are read for every architecture, under its prefix.
  ArchitectureKey keys[kMaxArchitectureKeys];
  int key_count;
  std::uint32_t roles;     // role_bit()s of the tensors its files may hold
  std::uint32_t required;  // those that must be present (a subset of roles)
  // The names of the kind's own hyperparameters (kind_params[i], filled by a key with field
  // kKindParam<i>) in its own terms: messages, the CLI and the trainer's
  // schema use them; null past the last.
  const char* param_names[kMaxKindParams] = {};
  // The rows of the kind's own roles, kind_roles[kind_role_index(r)] for r = kKindGlobal0..
  // (read once per token: per_layer false) and kKindLayer0.. (per_layer true); a row the kind
  // does not use has a null name.
  RoleInfo kind_roles[kMaxKindRoles] = {};
  // The roles a token reads, in the order it reads them (per-layer roles: within each layer).
  TensorRole forward[kTensorRoleCount] = {};
  int forward_count = 0;
};

// The row of `role` in `arch`: a shared row, or the kind's own.
const RoleInfo& role_info(const Architecture& arch, TensorRole role);
// The place of `role` in arch.forward; -1 if a token does not read it.
int forward_index(const Architecture& arch, TensorRole role);
// Whether a token reads global `role` before the layers (the token embedding) rather than after
// them (the final norm, the classifier): llama.cpp's tensor order and the streaming order both
// put it first. False for per-layer roles and those a token does not read.
bool read_before_layers(const Architecture& arch, TensorRole role);

// The config field `f` names (ConfigField::kVocab: vocab_size), for readers and writers.
int* config_field(ModelConfig* config, ConfigField f);
// The name of config field `f` in `arch`: as ModelConfig spells it ("dim", "n_layers"), a kind
// parameter by the architecture's name for it ("kind_params[0]" if unnamed).
const char* config_field_name(const Architecture& arch, ConfigField f);
// The kind parameter field of index i (ConfigField::kKindParam0 + i).
constexpr ConfigField kind_param_field(int i) {
  return static_cast<ConfigField>(static_cast<int>(ConfigField::kKindParam0) + i);
}
inline int config_value(const ModelConfig& config, ConfigField f) {
  return *config_field(const_cast<ModelConfig*>(&config), f);
}

// The built-in `llama` (llama2.c's and llama.cpp's Llama-2 decoder).
inline constexpr std::uint32_t kLlamaRequired =
    role_bit(TensorRole::kTokenEmbedding) | role_bit(TensorRole::kRmsAtt) | role_bit(TensorRole::kWq) |
    role_bit(TensorRole::kWk) | role_bit(TensorRole::kWv) | role_bit(TensorRole::kWo) | role_bit(TensorRole::kRmsFfn) |
    role_bit(TensorRole::kW1) | role_bit(TensorRole::kW2) | role_bit(TensorRole::kW3) | role_bit(TensorRole::kRmsFinal);

// llama.cpp's LLM_ARCH_LLAMA keys; head_count_kv defaults to head_count, vocab_size to the
// embedding table's rows (both checked where they are known).
inline constexpr Architecture kLlamaArchitecture = {
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
    {},
    {},
    {TensorRole::kTokenEmbedding, TensorRole::kRmsAtt, TensorRole::kWq, TensorRole::kWk, TensorRole::kWv,
     TensorRole::kWo, TensorRole::kRmsFfn, TensorRole::kW1, TensorRole::kW3, TensorRole::kW2, TensorRole::kRmsFinal,
     TensorRole::kWcls},
    12,
};

const Architecture& llama_architecture();

// A kind that extends `base` (its keys, under the new name's prefix, its roles and their order):
// plus `key`, its field named `param` if it is a kind parameter. For a kind's own schema file
// (format/<kind>_schema.cpp), at compile time, with add_kind_role for its roles.
constexpr Architecture extend_architecture(const Architecture& base, const char* name, ArchitectureKey key,
                                           const char* param) {
  Architecture a = base;
  a.name = name;
  a.keys[a.key_count++] = key;
  if (key.field >= ConfigField::kKindParam0)
    a.param_names[static_cast<int>(key.field) - static_cast<int>(ConfigField::kKindParam0)] = param;
  return a;
}

// Adds the kind's own role `role` with row `row` (required) to `a`, read right after the role
// `after` in the forward order (before `after`'s successor).
constexpr void add_kind_role(Architecture& a, TensorRole role, const RoleInfo& row, TensorRole after) {
  a.kind_roles[kind_role_index(role)] = row;
  a.roles |= role_bit(role);
  a.required |= role_bit(role);
  int at = 0;
  while (at < a.forward_count && a.forward[at] != after) ++at;
  for (int i = a.forward_count; i > at + 1; --i) a.forward[i] = a.forward[i - 1];
  a.forward[at + 1] = role;
  ++a.forward_count;
}

// The architecture called `name` (built in, or added with add_architecture), or nullptr.
const Architecture* find_architecture(const char* name);
// Every architecture's name, comma-separated, into out[cap] ("llama, ..."), for messages.
void architecture_names(char* out, std::size_t cap);
// Adds an architecture for the rest of the process (a port's own kind, a test's); `arch` must
// outlive every reader. Errors: its name is taken, or the table is full (kUnsupported).
Status add_architecture(const Architecture* arch);

}  // namespace pocketlm
