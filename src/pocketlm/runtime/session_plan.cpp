#include "pocketlm/runtime/session_plan.h"

#include <cstring>
#include <initializer_list>

#include "pocketlm/base/format.h"
#include "pocketlm/format/architecture.h"
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

// The per-layer matrices of one plan region: how many, how many streamed, their bytes in
// storage and the layers those span.
struct LayerRegion {
  int matrices = 0, streamed = 0;
  char globals[40] = "";      // the region's global matrices (a kind's own global matrix), " + name" each
  std::uint64_t stored_bytes = 0;
  int first = -1, last = -1;  // layers with a streamed matrix
  bool hidden = false;        // a role shaped by hidden_dim
};

LayerRegion layer_region(const ModelSpec& spec, const WeightPlacement& placement, const char* region) {
  LayerRegion r;
  for (int i = 0; i < spec.tensor_count(); ++i) {
    const TensorInfo t = spec.tensor(i);
    const RoleInfo& info = *t.schema;
    if (info.use != TensorUse::kMatmul || std::strcmp(info.region, region) != 0) continue;
    ++r.matrices;
    if (!info.per_layer) {  // read whole every token like the layers' matrices
      const std::size_t used = std::strlen(r.globals);
      format_to(r.globals + used, sizeof r.globals - used, " + %s", info.name);
      if (placement.in_storage(t)) {
        ++r.streamed;
        r.stored_bytes += t.bytes();
      }
      continue;
    }
    r.hidden = r.hidden || info.rows == Extent::kHiddenDim || info.cols == Extent::kHiddenDim;
    if (!placement.in_storage(t)) continue;
    ++r.streamed;
    r.stored_bytes += t.bytes();
    if (r.first < 0) r.first = t.layer;
    r.last = t.layer;
  }
  return r;
}

// The names of the spec's per-layer roles of plan region `region`, in role order, separated by
// spaces ("wq wk wv wo"), into out[cap].
void layer_role_names(const ModelSpec& spec, const char* region, char* out, std::size_t cap) {
  std::size_t used = 0;
  if (cap) out[0] = '\0';
  for (int i = 0; i < kTensorRoleCount; ++i) {
    const RoleInfo& r = spec.role(static_cast<TensorRole>(i));
    if (!r.per_layer || std::strcmp(r.region, region) != 0) continue;
    const std::size_t n = format_to(out + used, cap - used, "%s%s", used ? " " : "", r.name);
    used = used + n < cap ? used + n : cap - 1;
  }
}

// Adds the resident and streamed parts of the per-layer matrices of `region`.
Status describe_layer_region(const ModelSpec& spec, const WeightPlacement& placement, const char* region,
                             MemoryPlan* plan) {
  const ModelConfig& c = spec.config;
  const LayerRegion r = layer_region(spec, placement, region);
  if (r.matrices == 0) return Status();
  char roles[48], type[32], hidden[24] = "", streamed[48] = "", note[96];
  layer_role_names(spec, region, roles, sizeof roles);
  for (int i = 0; i < spec.tensor_count(); ++i) {
    const TensorInfo t = spec.tensor(i);
    if (t.layer == 0 && t.schema->use == TensorUse::kMatmul && std::strcmp(t.schema->region, region) == 0) {
      type_label(t, type, sizeof type);
      break;
    }
  }
  if (r.hidden) format_to(hidden, sizeof hidden, " (hidden_dim %d)", c.hidden_dim);
  if (r.streamed) format_to(streamed, sizeof streamed, ", %d of the %d matrices streamed", r.streamed, r.matrices);
  format_to(note, sizeof note, "%s x %d layer%s%s%s%s, %s", roles, c.n_layers, plural_s(c.n_layers), r.globals, hidden,
            streamed, type);
  POCKETLM_TRY(plan->add(region, 0, note, Heat::kOncePerToken));
  if (r.streamed == 0) return Status();
  char name[sizeof PlanRegion::name];
  // "streamed attention": the region's first word.
  format_to(name, sizeof name, "streamed %.*s", static_cast<int>(std::strcspn(region, " ")), region);
  char layers[32];
  if (r.first < 0)
    format_to(layers, sizeof layers, "the model");
  else if (r.first == r.last)
    format_to(layers, sizeof layers, "layer %d", r.first);
  else
    format_to(layers, sizeof layers, "layers %d..%d", r.first, r.last);
  format_to(note, sizeof note, "%d matri%s of %s, read every token", r.streamed, r.streamed == 1 ? "x" : "ces", layers);
  return plan->add_stored(name, r.stored_bytes, note);
}

// The spec's norm roles by the role table: "rms_att, rms_ffn per layer + rms_final, f32".
const char* norm_names(const ModelSpec& spec, char* out, std::size_t cap) {
  std::size_t used = 0;
  for (bool per_layer : {true, false}) {
    if (!per_layer) used += format_to(out + used, cap - used, " per layer +");
    bool first = true;
    for (int i = 0; i < kTensorRoleCount; ++i) {
      const auto role = static_cast<TensorRole>(i);
      const RoleInfo& info = spec.role(role);
      if (!spec.has(role) || info.use != TensorUse::kNorm || info.per_layer != per_layer) continue;
      used += format_to(out + used, cap - used, "%s%s", first ? (per_layer ? "" : " ") : ", ", info.name);
      first = false;
    }
  }
  format_to(out + used, cap - used, ", f32");
  return out;
}

}  // namespace

Status describe_session_regions(const ModelSpec& spec, const WeightPlacement& placement, int seq_len, KvType kv,
                                int prefill_batch, bool batched_attention, std::size_t io_chunk_bytes,
                                MemoryPlan* plan) {
  const ModelConfig& c = spec.config;
  char note[96];
  // The row-gather tables (the token embedding, a kind's own tables).
  bool table_stored = false;
  for (int i = 0; i < kTensorRoleCount; ++i) {
    const auto role = static_cast<TensorRole>(i);
    if (!spec.has(role) || spec.role(role).use != TensorUse::kRowGather) continue;
    const TensorInfo table = spec.tensor(role, -1);
    char type[32];
    type_label(table, type, sizeof type);
    const bool classifier = role == TensorRole::kTokenEmbedding && spec.shared_classifier;
    if (placement.in_storage(table)) {
      table_stored = true;
      format_to(note, sizeof note, "[%llu, %llu] %s; one row (%llu bytes) read per token%s",
                static_cast<unsigned long long>(table.rows), static_cast<unsigned long long>(table.cols), type,
                static_cast<unsigned long long>(table.bytes() / table.rows),
                classifier ? ", and whole as the classifier" : "");
      POCKETLM_TRY(plan->add_stored(table.schema->region, table.bytes(), note));
    } else {
      format_to(note, sizeof note, "[%llu, %llu] %s; one row %s per token", static_cast<unsigned long long>(table.rows),
                static_cast<unsigned long long>(table.cols), type, table.type != TensorType::kF32 ? "dequantized" : "copied");
      POCKETLM_TRY(plan->add(table.schema->region, 0, note, Heat::kRowPerToken));
    }
  }
  // The per-layer matrices, region by region in forward order.
  const Architecture* arch = spec.schema();
  const auto layer_matmul = [&spec](TensorRole r) { return is_per_layer(r) && spec.role(r).use == TensorUse::kMatmul; };
  for (int i = 0; arch && i < arch->forward_count; ++i) {
    if (!layer_matmul(arch->forward[i])) continue;
    const char* region = spec.role(arch->forward[i]).region;
    bool seen = false;
    for (int j = 0; j < i; ++j)
      seen = seen || (layer_matmul(arch->forward[j]) && std::strcmp(spec.role(arch->forward[j]).region, region) == 0);
    if (!seen) POCKETLM_TRY(describe_layer_region(spec, placement, region, plan));
  }
  POCKETLM_TRY(plan->add(region::kNorms, 0, norm_names(spec, note, sizeof note), Heat::kOncePerToken));
  if (!spec.shared_classifier && placement.in_storage(spec.tensor(TensorRole::kWcls, -1))) {
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
  bool kind_buffers = false;  // a kind with hyperparameters of its own carves buffers of its own
  for (int v : c.kind_params) kind_buffers = kind_buffers || v > 0;
  format_to(note, sizeof note, "x xb xb2 q (dim) hb hb2 (hidden) att (heads x seq)%s%s",
            kind_buffers ? " + the kind's own" : "", int8_input ? " + quantized input copy" : "");
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
    bool streamed = false;
    for (int i = 0; i < spec.tensor_count() && !streamed; ++i)
      streamed = placement.residency(spec.tensor(i)) == Residency::kStreamed;
    if (streamed)
      format_to(note, sizeof note, "weights read from storage: 2 blocks of ~%zu KiB in flight, repacked in place%s",
                placement.block_bytes / 1024, table_stored ? ", 1 table row" : "");
    else
      format_to(note, sizeof note, "one row of a table in storage");
    POCKETLM_TRY(plan->add(kStreamRegion, 0, note));
  }
  return Status();
}

}  // namespace pocketlm
