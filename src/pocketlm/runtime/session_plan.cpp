#include "pocketlm/runtime/session_plan.h"

#include <cstring>

#include "pocketlm/base/format.h"
#include "pocketlm/model/blocks.h"
#include "pocketlm/model/placed_weights.h"
#include "pocketlm/runtime/session.h"
#include "pocketlm/sampling/sampler.h"
#include "pocketlm/text/tokenizer.h"

namespace pocketlm {

namespace {

// "q80 GS 32" or "f32": a tensor's type as the plan notes print it.
void type_label(const TensorInfo& t, char* buf, std::size_t cap) {
  if (type_traits(t.type).block == 0)
    format_to(buf, cap, "%s GS %d", type_name(t.type), t.group);
  else
    format_to(buf, cap, "%s", type_name(t.type));
}

}  // namespace

Status describe_session_regions(const ModelSpec& spec, const WeightPlacement& placement, int seq_len, KvType kv,
                                int prefill_batch, bool batched_attention, std::size_t io_chunk_bytes,
                                MemoryPlan* plan) {
  const ModelConfig& c = spec.config;
  char note[96], emb[32], attn[32], ffn[32];
  type_label(spec.tensor(TensorRole::kTokenEmbedding, -1), emb, sizeof emb);
  type_label(spec.tensor(TensorRole::kWq, 0), attn, sizeof attn);
  type_label(spec.tensor(TensorRole::kW1, 0), ffn, sizeof ffn);
  const bool quantized = spec.type(TensorRole::kTokenEmbedding) != TensorType::kF32;
  const int streamed = placement.streamed_layers, resident = c.n_layers - streamed;
  // Bytes of the weights that stay in storage, by plan region.
  std::uint64_t stored_attention = 0, stored_ffn = 0;
  for (int i = 0; i < spec.tensor_count(); ++i) {
    const TensorInfo t = spec.tensor(i);
    if (!is_per_layer(t.role) || !placement.in_storage(t, c.n_layers, spec.shared_classifier)) continue;
    (std::strcmp(role_info(t.role).region, region::kAttention) == 0 ? stored_attention : stored_ffn) += t.bytes();
  }
  char attn_roles[48], ffn_roles[48];
  layer_role_names(region::kAttention, attn_roles, sizeof attn_roles);
  layer_role_names(region::kFfn, ffn_roles, sizeof ffn_roles);
  const TensorInfo table = spec.tensor(TensorRole::kTokenEmbedding, -1);
  if (placement.table_in_storage) {
    format_to(note, sizeof note, "[%d, %d] %s; one row (%llu bytes) read per token%s", c.vocab_size, c.dim, emb,
              static_cast<unsigned long long>(table.bytes() / table.rows),
              spec.shared_classifier ? ", and whole as the classifier" : "");
    POCKETLM_TRY(plan->add_stored(region::kEmbedding, table.bytes(), note));
  } else {
    format_to(note, sizeof note, "[%d, %d] %s; one row %s per token", c.vocab_size, c.dim, emb,
              quantized ? "dequantized" : "copied");
    POCKETLM_TRY(plan->add(region::kEmbedding, 0, note, Heat::kRowPerToken));
  }
  format_to(note, sizeof note, "%s x %d layer%s, %s", attn_roles, resident, plural_s(resident), attn);
  POCKETLM_TRY(plan->add(region::kAttention, 0, note, Heat::kOncePerToken));
  format_to(note, sizeof note, "%s x %d layer%s (hidden_dim %d), %s", ffn_roles, resident, plural_s(resident),
            c.hidden_dim, ffn);
  POCKETLM_TRY(plan->add(region::kFfn, 0, note, Heat::kOncePerToken));
  if (streamed > 0) {
    format_to(note, sizeof note, "%s of layers %d..%d, read every token", attn_roles, resident, c.n_layers - 1);
    POCKETLM_TRY(plan->add_stored(kStreamedAttentionRegion, stored_attention, note));
    format_to(note, sizeof note, "%s of layers %d..%d, read every token", ffn_roles, resident, c.n_layers - 1);
    POCKETLM_TRY(plan->add_stored(kStreamedFfnRegion, stored_ffn, note));
  }
  POCKETLM_TRY(plan->add(region::kNorms, 0, "rms_att, rms_ffn per layer + rms_final, f32", Heat::kOncePerToken));
  if (!spec.shared_classifier && placement.classifier_in_storage) {
    const TensorInfo wcls = spec.tensor(TensorRole::kWcls, -1);
    POCKETLM_TRY(plan->add_stored(region::kClassifier, wcls.bytes(), "wcls [vocab_size, dim], read every token"));
  } else {
    POCKETLM_TRY(plan->add(region::kClassifier, 0,
                           spec.shared_classifier ? "shared with the embedding table" : "wcls [vocab_size, dim], unshared",
                           Heat::kOncePerToken));
  }
  format_to(note, sizeof note, "K and V: %d layer%s x %d token%s x kv_dim %d x %s", c.n_layers, plural_s(c.n_layers),
            seq_len, plural_s(seq_len), c.kv_dim(), kv == KvType::kF16 ? "f16 (--kv f16: not bit-exact)" : "f32");
  POCKETLM_TRY(plan->add(region::kKvCache, 0, note, Heat::kOncePerToken));
  bool int8_input = false;
  for (int r = 0; r < kTensorRoleCount; ++r) {
    const auto role = static_cast<TensorRole>(r);
    if (spec.has(role) && type_traits(type_traits(spec.type(role)).activation).quantize) int8_input = true;
  }
  format_to(note, sizeof note, "x xb xb2 q (dim) hb hb2 (hidden) att (heads x seq)%s",
            int8_input ? " + quantized input copy" : "");
  POCKETLM_TRY(plan->add(region::kActivations, 0, note));
  if (prefill_batch > 1) {
    char scores[48] = "";
    if (batched_attention) format_to(scores, sizeof scores, "; scores %d x heads x seq", kAttentionQueryTile);
    format_to(note, sizeof note, "%d prompt tokens per pass: x xb xb2 q hb hb2%s each%s", prefill_batch,
              int8_input ? " + quantized input" : "", scores);
    POCKETLM_TRY(plan->add(region::kPrefill, 0, note));
  }
  format_to(note, sizeof note, "[%d] f32", c.vocab_size);
  POCKETLM_TRY(plan->add(region::kLogits, 0, note));
  POCKETLM_TRY(plan->add(kSamplerRegion, 0, "top-p: candidate keys and running sums [vocab_size] x 2 + bucket counts"));
  POCKETLM_TRY(plan->add(kTokenizerRegion, 0, "scores, offsets, piece bytes, sorted index", Heat::kRare));
  format_to(note, sizeof note, "tokenizer read buffer (reads are at most %zu bytes)", io_chunk_bytes);
  POCKETLM_TRY(plan->add(kIoChunkRegion, 0, note, Heat::kRare));
  format_to(note, sizeof note, "RoPE cos and sin: %d position%s x %d angle%s x f32", seq_len, plural_s(seq_len),
            c.head_size() / 2, plural_s(c.head_size() / 2));
  POCKETLM_TRY(plan->add(region::kRope, 0, note));
  POCKETLM_TRY(plan->add(kLayerTableRegion, 0, "per-layer weight descriptors (type, shape, pointers)"));
  POCKETLM_TRY(plan->add(kRepackRegion, 0, "load-time buffer: one block of rows interleaved for SIMD lanes", Heat::kRare));
  if (placement.any()) {
    format_to(note, sizeof note, "weights read from storage: 2 blocks of ~%zu KiB in flight, 1 repacked%s",
              placement.block_bytes / 1024, placement.table_in_storage ? ", 1 embedding row" : "");
    POCKETLM_TRY(plan->add(kStreamRegion, 0, note));
  }
  return Status();
}

}  // namespace pocketlm
