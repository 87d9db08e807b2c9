#include "pocketlm/format/tensor_role.h"

#include "pocketlm/base/format.h"

namespace pocketlm {

namespace {

const RoleInfo kRoles[kTensorRoleCount] = {
    {"token_embedding", "token_embd.weight", false, region::kEmbedding},
    {"rms_att", "blk.%d.attn_norm.weight", true, region::kNorms},
    {"wq", "blk.%d.attn_q.weight", true, region::kAttention},
    {"wk", "blk.%d.attn_k.weight", true, region::kAttention},
    {"wv", "blk.%d.attn_v.weight", true, region::kAttention},
    {"wo", "blk.%d.attn_output.weight", true, region::kAttention},
    {"rms_ffn", "blk.%d.ffn_norm.weight", true, region::kNorms},
    {"w1", "blk.%d.ffn_gate.weight", true, region::kFfn},
    {"w2", "blk.%d.ffn_down.weight", true, region::kFfn},
    {"w3", "blk.%d.ffn_up.weight", true, region::kFfn},
    {"rms_final", "output_norm.weight", false, region::kNorms},
    // llama2.c v0 stores RoPE's tables; pocketlm computes them (model/rope_table.h).
    {"freq_cis_real", nullptr, false, region::kUnused},
    {"freq_cis_imag", nullptr, false, region::kUnused},
    {"wcls", "output.weight", false, region::kClassifier},
};

}  // namespace

const RoleInfo& role_info(TensorRole role) {
  static const RoleInfo kInvalid = {"?", nullptr, false, region::kUnused};
  const int i = static_cast<int>(role);
  return i >= 0 && i < kTensorRoleCount ? kRoles[i] : kInvalid;
}

void gguf_tensor_name(TensorRole role, int layer, char* out, std::size_t cap) {
  const char* g = role_info(role).gguf_name;
  if (layer >= 0)
    format_to(out, cap, "blk.%d%s", layer, g + 6);  // + 6: after "blk.%d"
  else
    format_to(out, cap, "%s", g);
}

}  // namespace pocketlm
