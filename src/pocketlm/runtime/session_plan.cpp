#include "pocketlm/runtime/session_plan.h"

#include <cstdio>

#include "pocketlm/model/transformer.h"
#include "pocketlm/runtime/session.h"
#include "pocketlm/sampling/sampler.h"
#include "pocketlm/text/tokenizer.h"

namespace pocketlm {

void describe_session_regions(const ModelSpec& spec, int seq_len, std::size_t io_chunk_bytes, MemoryPlan* plan) {
  const ModelConfig& c = spec.config;
  const bool q80 = spec.format == ModelFormat::kLlama2cV2;
  char note[96];
  if (q80)
    std::snprintf(note, sizeof note, "[%d, %d] q8_0 GS %d; one row dequantized per token", c.vocab_size, c.dim,
                  spec.group_size);
  else
    std::snprintf(note, sizeof note, "[%d, %d] f32; one row copied per token", c.vocab_size, c.dim);
  plan->add(region::kEmbedding, 0, note);
  std::snprintf(note, sizeof note, "wq wk wv wo x %d layers, %s", c.n_layers, q80 ? "q8_0" : "f32");
  plan->add(region::kAttention, 0, note);
  std::snprintf(note, sizeof note, "w1 w2 w3 x %d layers (hidden_dim %d), %s", c.n_layers, c.hidden_dim,
                q80 ? "q8_0" : "f32");
  plan->add(region::kFfn, 0, note);
  plan->add(region::kNorms, 0, "rms_att, rms_ffn per layer + rms_final, f32");
  plan->add(region::kClassifier, 0,
            spec.shared_classifier ? "shared with the embedding table" : "wcls [vocab_size, dim], unshared");
  std::snprintf(note, sizeof note, "K and V: %d layers x %d tokens x kv_dim %d x f32", c.n_layers, seq_len,
                c.kv_dim());
  plan->add(region::kKvCache, 0, note);
  std::snprintf(note, sizeof note, "x xb xb2 q (dim) hb hb2 (hidden) att (heads x seq)%s",
                q80 ? " + int8 input copy" : "");
  plan->add(region::kActivations, 0, note);
  std::snprintf(note, sizeof note, "[%d] f32", c.vocab_size);
  plan->add(region::kLogits, 0, note);
  plan->add(kSamplerRegion, 0, "top-p (prob, index) pairs [vocab_size]");
  plan->add(kTokenizerRegion, 0, "scores, offsets, piece bytes, sorted index");
  std::snprintf(note, sizeof note, "tokenizer read buffer (reads are at most %zu bytes)", io_chunk_bytes);
  plan->add(kIoChunkRegion, 0, note);
  std::snprintf(note, sizeof note, "RoPE cos and sin: %d positions x %d angles x f32", seq_len, c.head_size() / 2);
  plan->add(region::kRope, 0, note);
  plan->add(region::kLayerTable, 0, "per-layer weight pointers");
  plan->add(region::kRepack, 0, "load-time buffer: one block of rows interleaved for SIMD lanes");
  plan->add(kPaddingRegion, 0, "every buffer starts on a 16-byte boundary");
}

}  // namespace pocketlm
