// Architectures: what a model kind's file says and holds, as data. Per kind: its GGUF
// `general.architecture` name (the prefix of its hyperparameter keys, `llama.block_count`), which
// keys fill which config fields (the Llama-family ones every kind shares, and the kind's own
// hyperparameters, into ModelConfig::kind_params), the tensor roles its files may hold, and
// which of those are required. The GGUF reader reads the architecture from the file and fills
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
  kDim, kHiddenDim, kLayers, kHeads, kKvHeads, kSeqLen, kVocab, kPerLayerDim,
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
};

// The config field `f` names (ConfigField::kVocab: vocab_size), for readers and writers.
int* config_field(ModelConfig* config, ConfigField f);
// The name of config field `f` as ModelConfig spells it ("dim", "n_layers", "kind_params[0]").
const char* config_field_name(ConfigField f);
inline int config_value(const ModelConfig& config, ConfigField f) {
  return *config_field(const_cast<ModelConfig*>(&config), f);
}

// The built-in `llama` (llama2.c's and llama.cpp's Llama-2 decoder).
const Architecture& llama_architecture();
// The built-in `pocketlm-ple`: llama plus a per-layer embedding (model/ple.h).
const Architecture& ple_architecture();

// The architecture called `name` (built in, or added with add_architecture), or nullptr.
const Architecture* find_architecture(const char* name);
// Every architecture's name, comma-separated, into out[cap] ("llama, ..."), for messages.
void architecture_names(char* out, std::size_t cap);
// Adds an architecture for the rest of the process (a port's own kind, a test's); `arch` must
// outlive every reader. Errors: its name is taken, or the table is full (kUnsupported).
Status add_architecture(const Architecture* arch);

}  // namespace pocketlm
