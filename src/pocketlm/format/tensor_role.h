// Tensor roles: what each weight of a Llama-family model is for, as one table (name in
// llama2.c's terms, name in GGUF's, per layer or not, and the memory-plan region that holds
// it). Readers map their files onto roles; the model binds roles to its blocks; the plan
// groups bytes by the role's region. A new kind of weight (a per-layer embedding table) is one
// more row.
#pragma once

#include <cstddef>
#include <cstdint>

namespace pocketlm {

enum class TensorRole : std::uint8_t {
  kTokenEmbedding, kRmsAtt, kWq, kWk, kWv, kWo, kRmsFfn, kW1, kW2, kW3, kRmsFinal,
  kFreqCisReal, kFreqCisImag, kWcls, kCount
};
inline constexpr int kTensorRoleCount = static_cast<int>(TensorRole::kCount);

// Memory-plan regions that hold weights.
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
  const char* region;     // plan region (region::kUnused: not loaded)
};

const RoleInfo& role_info(TensorRole role);
inline const char* role_name(TensorRole role) { return role_info(role).name; }
inline bool is_per_layer(TensorRole role) { return role_info(role).per_layer; }
// The GGUF name of (role, layer) into out[cap]: "blk.3.attn_q.weight" for a layer >= 0 of a
// per-layer role, else the table's name ("output_norm.weight"). The role must have a GGUF name.
void gguf_tensor_name(TensorRole role, int layer, char* out, std::size_t cap);

}  // namespace pocketlm
