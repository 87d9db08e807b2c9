#include "pocketlm/model/decoder.h"

namespace pocketlm {

Status Decoder::carve(const ModelSpec& spec, int seq_len, const Kernels& kernels, const WeightPlacement& placement,
                      KvType kv, Arena& arena) {
  spec_ = &spec;
  seq_len_ = seq_len;
  ops_.set_source(&weights_);
  POCKETLM_TRY(weights_.carve(spec, placement, kernels, arena));
  POCKETLM_TRY(state_.carve(spec.config, seq_len, kv, arena));
  return ops_.carve(spec, kernels, arena);
}

float* Decoder::forward(int token, int pos) {
  const ModelConfig& c = spec_->config;
  DecoderState& s = state_;
  const std::int32_t one = token;
  weights_.row(TensorRole::kTokenEmbedding, token, s.x);
  gather_rows(&one, 1);
  weights_.begin_token();
  layers(&one, TokenRows::of(s), pos);
  ops_.rmsnorm(s.x, s.x, weights_.final_norm(), c.dim);
  ops_.matmul(s.logits, weights_.classifier(), s.x, c.dim);
  return s.logits;
}

Status Decoder::carve_prefill(int batch, Arena& arena) {
  POCKETLM_TRY(batch_.carve(spec_->config, seq_len_, batch, ops_.kernels().attention_batch != nullptr, arena));
  return ops_.carve_batch(*spec_, batch, arena);
}

void Decoder::forward_batch(const std::int32_t* tokens, int count, int pos) {
  const auto dim = static_cast<std::size_t>(spec_->config.dim);
  for (int t = 0; t < count; ++t) weights_.row(TensorRole::kTokenEmbedding, tokens[t], batch_.x + static_cast<std::size_t>(t) * dim);
  gather_rows(tokens, count);
  // The layers only: these tokens' logits are never sampled (the next tokens are the prompt's).
  weights_.begin_layers();
  layers(tokens, TokenRows::of(batch_, state_, count), pos);
}

}  // namespace pocketlm
