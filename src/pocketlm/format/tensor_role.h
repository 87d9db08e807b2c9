// Tensor roles: what each weight of a Llama-family model is and how the forward pass uses it,
// as one row per role (name in llama2.c's terms, name in GGUF's, per layer or not, use, shape,
// and the memory-plan region that holds it). Readers map their files onto roles; the model
// binds roles to its blocks; the planner and the weight source ask the use column (a
// row-gather table costs one row per token wherever it lives, a matmul weight all of its
// bytes); the plan groups bytes by region.
//
// The rows here are the Llama family's, which every kind shares. A model kind's own tensors
// are rows of its architecture (format/architecture.h: Architecture::kind_roles), under the
// role ids kKindGlobal0.. and kKindLayer0.., which mean what the spec's architecture says; so
// is the order a token reads them in (Architecture::forward).
#pragma once

#include <cstddef>
#include <cstdint>

namespace pocketlm {

enum class TensorRole : std::uint8_t {
  kTokenEmbedding, kRmsAtt, kWq, kWk, kWv, kWo, kRmsFfn, kW1, kW2, kW3, kRmsFinal,
  kFreqCisReal, kFreqCisImag, kWcls,
  // A model kind's own roles, named in its schema file: tensors read once per token (global),
  // then tensors of every layer.
  kKindGlobal0, kKindGlobal1, kKindGlobal2, kKindLayer0, kKindLayer1, kKindLayer2, kCount
};
inline constexpr int kTensorRoleCount = static_cast<int>(TensorRole::kCount);
inline constexpr int kSharedRoleCount = static_cast<int>(TensorRole::kKindGlobal0);
// How many roles of each sort a kind may add: the weight source keeps a slot for each in every
// layer's table (an arena region), whatever the kind.
inline constexpr int kMaxKindGlobalRoles = static_cast<int>(TensorRole::kKindLayer0) - kSharedRoleCount;
inline constexpr int kMaxKindLayerRoles = kTensorRoleCount - static_cast<int>(TensorRole::kKindLayer0);
inline constexpr int kMaxKindRoles = kMaxKindGlobalRoles + kMaxKindLayerRoles;

// The kind's i-th role of each sort (i < kMaxKindGlobalRoles / kMaxKindLayerRoles).
constexpr TensorRole kind_global_role(int i) { return static_cast<TensorRole>(kSharedRoleCount + i); }
constexpr TensorRole kind_layer_role(int i) {
  return static_cast<TensorRole>(static_cast<int>(TensorRole::kKindLayer0) + i);
}
constexpr bool is_kind_role(TensorRole role) { return static_cast<int>(role) >= kSharedRoleCount; }
// The index of a kind role among its architecture's kind_roles rows.
constexpr int kind_role_index(TensorRole role) { return static_cast<int>(role) - kSharedRoleCount; }

// How the forward pass reads a weight.
enum class TensorUse : std::uint8_t {
  kMatmul,     // a matrix every token multiplies whole (W · x)
  kNorm,       // an f32 vector of RMSNorm weights
  kRowGather,  // a table of which a token reads one row (the token embedding)
  kUnused,     // stored by some files, read by no kind (llama2.c v0's freq_cis)
};

// Hyperparameters a model kind may add to the Llama family's (ModelConfig::kind_params).
inline constexpr int kMaxKindParams = 4;

// One dimension of a role's shape, in terms of the config (format/model_spec.h): a Llama-family
// size, one of the kind's own hyperparameters (param_extent(i): kind_params[i]) or n_layers
// times one (all_layers_param_extent(i)), so that a kind's shapes use its own parameters.
enum class Extent : std::uint8_t {
  kOne, kDim, kHiddenDim, kKvDim, kVocab, kSeqLen, kHalfHead,
  kParam0, kAllLayersParam0 = kParam0 + kMaxKindParams, kEnd = kAllLayersParam0 + kMaxKindParams
};
constexpr Extent param_extent(int i) { return static_cast<Extent>(static_cast<int>(Extent::kParam0) + i); }
constexpr Extent all_layers_param_extent(int i) {
  return static_cast<Extent>(static_cast<int>(Extent::kAllLayersParam0) + i);
}

// Memory-plan regions that hold the Llama family's weights (a kind's own rows name theirs).
namespace region {
inline constexpr const char* kEmbedding = "embedding";
inline constexpr const char* kAttention = "attention weights";
inline constexpr const char* kFfn = "ffn weights";
inline constexpr const char* kNorms = "norms";
inline constexpr const char* kClassifier = "classifier";
inline constexpr const char* kUnused = "";  // read by no model kind (llama2.c v0's freq_cis)
}  // namespace region

struct RoleInfo {
  const char* name;       // llama2.c's name: "token_embedding", "wq", ...
  const char* gguf_name;  // llama.cpp's, with %d for the layer: "blk.%d.attn_q.weight"; null if none
  bool per_layer;
  TensorUse use;
  Extent rows, cols;      // shape [rows (out), cols (in)] under a config
  const char* region;     // plan region (region::kUnused: not loaded)
};

// The shared rows, in enum order.
inline constexpr RoleInfo kRoleTable[kSharedRoleCount] = {
    {"token_embedding", "token_embd.weight", false, TensorUse::kRowGather, Extent::kVocab, Extent::kDim,
     region::kEmbedding},
    {"rms_att", "blk.%d.attn_norm.weight", true, TensorUse::kNorm, Extent::kOne, Extent::kDim, region::kNorms},
    {"wq", "blk.%d.attn_q.weight", true, TensorUse::kMatmul, Extent::kDim, Extent::kDim, region::kAttention},
    {"wk", "blk.%d.attn_k.weight", true, TensorUse::kMatmul, Extent::kKvDim, Extent::kDim, region::kAttention},
    {"wv", "blk.%d.attn_v.weight", true, TensorUse::kMatmul, Extent::kKvDim, Extent::kDim, region::kAttention},
    {"wo", "blk.%d.attn_output.weight", true, TensorUse::kMatmul, Extent::kDim, Extent::kDim, region::kAttention},
    {"rms_ffn", "blk.%d.ffn_norm.weight", true, TensorUse::kNorm, Extent::kOne, Extent::kDim, region::kNorms},
    {"w1", "blk.%d.ffn_gate.weight", true, TensorUse::kMatmul, Extent::kHiddenDim, Extent::kDim, region::kFfn},
    {"w2", "blk.%d.ffn_down.weight", true, TensorUse::kMatmul, Extent::kDim, Extent::kHiddenDim, region::kFfn},
    {"w3", "blk.%d.ffn_up.weight", true, TensorUse::kMatmul, Extent::kHiddenDim, Extent::kDim, region::kFfn},
    {"rms_final", "output_norm.weight", false, TensorUse::kNorm, Extent::kOne, Extent::kDim, region::kNorms},
    // llama2.c v0 stores RoPE's tables; pocketlm computes them (model/rope_table.h).
    {"freq_cis_real", nullptr, false, TensorUse::kUnused, Extent::kSeqLen, Extent::kHalfHead, region::kUnused},
    {"freq_cis_imag", nullptr, false, TensorUse::kUnused, Extent::kSeqLen, Extent::kHalfHead, region::kUnused},
    {"wcls", "output.weight", false, TensorUse::kMatmul, Extent::kVocab, Extent::kDim, region::kClassifier},
};

// The row of a shared role (for a kind's role ask the spec: ModelSpec::role).
constexpr const RoleInfo& role_info(TensorRole role) { return kRoleTable[static_cast<int>(role)]; }
// Whether a token reads `role` in every layer: the shared rows say, a kind's role its id.
constexpr bool is_per_layer(TensorRole role) {
  return is_kind_role(role) ? role >= TensorRole::kKindLayer0 : role_info(role).per_layer;
}

constexpr bool is_layer_role(const RoleInfo& r) { return r.per_layer; }
constexpr bool is_global_role(const RoleInfo& r) { return !r.per_layer && r.use != TensorUse::kUnused; }
// How many of the shared table's first `end` roles `in_set` accepts.
constexpr int count_roles(bool (*in_set)(const RoleInfo&), int end = kSharedRoleCount) {
  int n = 0;
  for (int r = 0; r < end; ++r) n += in_set(kRoleTable[r]) ? 1 : 0;
  return n;
}
inline constexpr int kSharedGlobalRoles = count_roles(is_global_role);
inline constexpr int kSharedLayerRoles = count_roles(is_layer_role);
inline constexpr int kGlobalRoleCount = kSharedGlobalRoles + kMaxKindGlobalRoles;
inline constexpr int kLayerRoleCount = kSharedLayerRoles + kMaxKindLayerRoles;

// Per-layer roles numbered 0..: the index of `role`'s weights in a layer's table
// (model/weight_source.h: LayerWeights), the shared ones in enum order, then the kind's; -1 for
// a global role.
constexpr int layer_slot(TensorRole role) {
  if (is_kind_role(role))
    return role >= TensorRole::kKindLayer0 ? kSharedLayerRoles + static_cast<int>(role) - static_cast<int>(TensorRole::kKindLayer0)
                                           : -1;
  return is_per_layer(role) ? count_roles(is_layer_role, static_cast<int>(role)) : -1;
}
// Global roles that some kind reads (not kUnused) numbered 0..: the index of `role`'s weights
// in the weight source's table of global tensors; -1 for the others.
constexpr int global_slot(TensorRole role) {
  if (is_kind_role(role)) return role < TensorRole::kKindLayer0 ? kSharedGlobalRoles + kind_role_index(role) : -1;
  return is_global_role(role_info(role)) ? count_roles(is_global_role, static_cast<int>(role)) : -1;
}

// The GGUF name of a role's tensor for `layer` into out[cap]: "blk.3.attn_q.weight" for a
// layer >= 0 of a per-layer role (its GGUF name `gguf_name`, "blk.%d..."), else `gguf_name`.
void gguf_tensor_name(const RoleInfo& role, int layer, char* out, std::size_t cap);

}  // namespace pocketlm
