#include "pocketlm/model/llama.h"

namespace pocketlm {

Status LlamaModel::carve(const ModelSpec& spec, int seq_len, const Kernels& kernels, const WeightPlacement& placement,
                         KvType kv, Arena& arena) {
  spec_ = &spec;
  seq_len_ = seq_len;
  ops_.set_source(&weights_);
  POCKETLM_TRY(weights_.carve(spec, placement, kernels, arena));
  POCKETLM_TRY(state_.carve(spec.config, seq_len, kv, arena));
  return ops_.carve(spec, kernels, arena);
}

float* LlamaModel::forward(int token, int pos) {
  const ModelConfig& c = spec_->config;
  DecoderState& s = state_;
  WeightSource& w = weights_;

  w.embedding_row(token, s.x);
  w.begin_token();
  for (int l = 0; l < c.n_layers; ++l) {
    const LayerWeights& layer = w.layer(l);
    attention_block(ops_, layer, c, seq_len_, s, l, pos);
    ffn_block(ops_, layer, c, s);
  }
  ops_.rmsnorm(s.x, s.x, w.final_norm(), c.dim);
  ops_.matmul(s.logits, w.classifier(), s.x, c.dim);
  return s.logits;
}

Status LlamaModel::carve_prefill(int batch, Arena& arena) {
  POCKETLM_TRY(batch_.carve(spec_->config, seq_len_, batch, ops_.kernels().attention_batch != nullptr, arena));
  return ops_.carve_batch(*spec_, batch, arena);
}

void LlamaModel::forward_batch(const std::int32_t* tokens, int count, int pos) {
  const ModelConfig& c = spec_->config;
  WeightSource& w = weights_;
  for (int t = 0; t < count; ++t) w.embedding_row(tokens[t], batch_.x + static_cast<std::size_t>(t) * c.dim);
  // The layers only: these tokens' logits are never sampled (the next tokens are the prompt's).
  w.begin_layers();
  for (int l = 0; l < c.n_layers; ++l) {
    const LayerWeights& layer = w.layer(l);
    attention_block_batch(ops_, layer, c, seq_len_, state_, batch_, l, pos, count);
    ffn_block_batch(ops_, layer, c, batch_, count);
  }
}

}  // namespace pocketlm
