// Tensor roles: what each weight of a Llama-family model is and how the forward pass uses it,
// as one table (name in llama2.c's terms, name in GGUF's, per layer or not, use, shape, place
// in forward order, and the memory-plan region that holds it). Readers map their files onto
// roles; the model binds roles to its blocks; the planner and the weight source ask the use
// column (a row-gather table costs one row per token wherever it lives, a matmul weight all of
// its bytes); the plan groups bytes by region. A new kind of weight is one more row; which
// roles a model kind reads, and which it requires, is its architecture's (format/architecture.h).
#pragma once

#include <cstddef>
#include <cstdint>

namespace pocketlm {

enum class TensorRole : std::uint8_t {
  kTokenEmbedding, kRmsAtt, kWq, kWk, kWv, kWo, kRmsFfn, kW1, kW2, kW3, kRmsFinal,
  kFreqCisReal, kFreqCisImag, kWcls,
  // Per-layer-embedding (PLE) models (model/ple.h): the table, its projection from the
  // embedding and the projection's norm; per layer the gate, the projection back into the
  // residual stream and its norm.
  kPleTable, kPleProj, kPleProjNorm, kPleGate, kPleOut, kPlePostNorm, kCount
};
inline constexpr int kTensorRoleCount = static_cast<int>(TensorRole::kCount);

// How the forward pass reads a weight.
enum class TensorUse : std::uint8_t {
  kMatmul,     // a matrix every token multiplies whole (W · x)
  kNorm,       // an f32 vector of RMSNorm weights
  kRowGather,  // a table of which a token reads one row (the token embedding)
  kUnused,     // stored by some files, read by no kind (llama2.c v0's freq_cis)
};

// One dimension of a role's shape, in terms of the config (format/model_spec.h).
// kPerLayerDim is a PLE model's P (ModelConfig::per_layer_dim), kAllLayersPerLayerDim n_layers x P.
enum class Extent : std::uint8_t {
  kOne, kDim, kHiddenDim, kKvDim, kVocab, kSeqLen, kHalfHead, kPerLayerDim, kAllLayersPerLayerDim
};

// Memory-plan regions that hold weights.
namespace region {
inline constexpr const char* kEmbedding = "embedding";
inline constexpr const char* kAttention = "attention weights";
inline constexpr const char* kFfn = "ffn weights";
inline constexpr const char* kNorms = "norms";
inline constexpr const char* kClassifier = "classifier";
inline constexpr const char* kPleTable = "per-layer table";      // PLE: one row of L x P per token
inline constexpr const char* kPleWeights = "per-layer weights";  // PLE: the projection, gates, outputs
inline constexpr const char* kUnused = "";  // read by no model kind (llama2.c v0's freq_cis)
}  // namespace region

struct RoleInfo {
  const char* name;       // llama2.c's name: "token_embedding", "wq", ...
  const char* gguf_name;  // llama.cpp's, with %d for the layer: "blk.%d.attn_q.weight"; null if none
  bool per_layer;
  TensorUse use;
  Extent rows, cols;      // shape [rows (out), cols (in)] under a config
  int order;              // place in the forward pass (a token reads roles in this order);
                          // per-layer roles are read in it within each layer
  const char* region;     // plan region (region::kUnused: not loaded)
};

// The table, in enum order. Forward order: the embedding row (a PLE model's table row, its
// projection and the projection's norm); per layer the attention norm, q k v, o, the FFN norm,
// w1 (gate) and w3 (up) together, w2 (down) (a PLE model's gate, output and post-norm); the
// final norm, the classifier. The PLE names are llama.cpp's for Gemma 3n's tensors.
inline constexpr RoleInfo kRoleTable[kTensorRoleCount] = {
    {"token_embedding", "token_embd.weight", false, TensorUse::kRowGather, Extent::kVocab, Extent::kDim, 0,
     region::kEmbedding},
    {"rms_att", "blk.%d.attn_norm.weight", true, TensorUse::kNorm, Extent::kOne, Extent::kDim, 4, region::kNorms},
    {"wq", "blk.%d.attn_q.weight", true, TensorUse::kMatmul, Extent::kDim, Extent::kDim, 5, region::kAttention},
    {"wk", "blk.%d.attn_k.weight", true, TensorUse::kMatmul, Extent::kKvDim, Extent::kDim, 6, region::kAttention},
    {"wv", "blk.%d.attn_v.weight", true, TensorUse::kMatmul, Extent::kKvDim, Extent::kDim, 7, region::kAttention},
    {"wo", "blk.%d.attn_output.weight", true, TensorUse::kMatmul, Extent::kDim, Extent::kDim, 8, region::kAttention},
    {"rms_ffn", "blk.%d.ffn_norm.weight", true, TensorUse::kNorm, Extent::kOne, Extent::kDim, 9, region::kNorms},
    {"w1", "blk.%d.ffn_gate.weight", true, TensorUse::kMatmul, Extent::kHiddenDim, Extent::kDim, 10, region::kFfn},
    {"w2", "blk.%d.ffn_down.weight", true, TensorUse::kMatmul, Extent::kDim, Extent::kHiddenDim, 12, region::kFfn},
    {"w3", "blk.%d.ffn_up.weight", true, TensorUse::kMatmul, Extent::kHiddenDim, Extent::kDim, 11, region::kFfn},
    {"rms_final", "output_norm.weight", false, TensorUse::kNorm, Extent::kOne, Extent::kDim, 16, region::kNorms},
    // llama2.c v0 stores RoPE's tables; pocketlm computes them (model/rope_table.h).
    {"freq_cis_real", nullptr, false, TensorUse::kUnused, Extent::kSeqLen, Extent::kHalfHead, -1, region::kUnused},
    {"freq_cis_imag", nullptr, false, TensorUse::kUnused, Extent::kSeqLen, Extent::kHalfHead, -1, region::kUnused},
    {"wcls", "output.weight", false, TensorUse::kMatmul, Extent::kVocab, Extent::kDim, 17, region::kClassifier},
    {"ple_table", "per_layer_token_embd.weight", false, TensorUse::kRowGather, Extent::kVocab,
     Extent::kAllLayersPerLayerDim, 1, region::kPleTable},
    {"ple_proj", "per_layer_model_proj.weight", false, TensorUse::kMatmul, Extent::kAllLayersPerLayerDim, Extent::kDim,
     2, region::kPleWeights},
    {"ple_proj_norm", "per_layer_proj_norm.weight", false, TensorUse::kNorm, Extent::kOne, Extent::kPerLayerDim, 3,
     region::kNorms},
    {"ple_gate", "blk.%d.inp_gate.weight", true, TensorUse::kMatmul, Extent::kPerLayerDim, Extent::kDim, 13,
     region::kPleWeights},
    {"ple_out", "blk.%d.proj.weight", true, TensorUse::kMatmul, Extent::kDim, Extent::kPerLayerDim, 14,
     region::kPleWeights},
    {"ple_post_norm", "blk.%d.post_norm.weight", true, TensorUse::kNorm, Extent::kOne, Extent::kDim, 15,
     region::kNorms},
};

constexpr const RoleInfo& role_info(TensorRole role) { return kRoleTable[static_cast<int>(role)]; }
inline const char* role_name(TensorRole role) { return role_info(role).name; }
constexpr bool is_per_layer(TensorRole role) { return role_info(role).per_layer; }

constexpr bool is_layer_role(const RoleInfo& r) { return r.per_layer; }
// Whether a token reads global `role` before the layers (the token embedding) rather than after
// them (the final norm, the classifier): llama.cpp's tensor order and the streaming order both
// put it first. False for per-layer and unused roles.
constexpr bool read_before_layers(TensorRole role) {
  if (role_info(role).per_layer || role_info(role).order < 0) return false;
  for (const RoleInfo& r : kRoleTable)
    if (r.per_layer && r.order < role_info(role).order) return false;
  return true;
}
constexpr bool is_global_role(const RoleInfo& r) { return !r.per_layer && r.use != TensorUse::kUnused; }
// How many of the table's first `end` roles `in_set` accepts.
constexpr int count_roles(bool (*in_set)(const RoleInfo&), int end = kTensorRoleCount) {
  int n = 0;
  for (int r = 0; r < end; ++r) n += in_set(kRoleTable[r]) ? 1 : 0;
  return n;
}

// Per-layer roles numbered 0.. in enum order: the index of `role`'s weights in a layer's table
// (model/weight_source.h: LayerWeights); -1 for a global role.
constexpr int layer_slot(TensorRole role) {
  return is_per_layer(role) ? count_roles(is_layer_role, static_cast<int>(role)) : -1;
}
// Global roles that some kind reads (not kUnused) numbered 0.. in enum order: the index of
// `role`'s weights in the weight source's table of global tensors; -1 for the others.
constexpr int global_slot(TensorRole role) {
  return is_global_role(role_info(role)) ? count_roles(is_global_role, static_cast<int>(role)) : -1;
}
inline constexpr int kGlobalRoleCount = count_roles(is_global_role);
inline constexpr int kLayerRoleCount = count_roles(is_layer_role);

// The roles `select` accepts, in forward order, into out[kTensorRoleCount]; returns how many.
template <typename Select>
int roles_in_forward_order(Select select, TensorRole* out) {
  int n = 0;
  for (int order = 0; order < kTensorRoleCount; ++order)
    for (int r = 0; r < kTensorRoleCount; ++r)
      if (kRoleTable[r].order == order && select(kRoleTable[r])) out[n++] = static_cast<TensorRole>(r);
  return n;
}

// The names of the per-layer roles of plan region `region_name`, in table order, separated by
// spaces ("wq wk wv wo"), into out[cap]: for the plan's notes.
void layer_role_names(const char* region_name, char* out, std::size_t cap);

// The GGUF name of (role, layer) into out[cap]: "blk.3.attn_q.weight" for a layer >= 0 of a
// per-layer role, else the table's name ("output_norm.weight"). The role must have a GGUF name.
void gguf_tensor_name(TensorRole role, int layer, char* out, std::size_t cap);

}  // namespace pocketlm
