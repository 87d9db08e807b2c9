#include "pocketlm/model/llama.h"

namespace pocketlm {

void LlamaModel::layers(const std::int32_t* /*tokens*/, const TokenRows& r, int pos) {
  const ModelConfig& c = spec_->config;
  for (int l = 0; l < c.n_layers; ++l) {
    const LayerWeights& layer = weights_.layer(l);
    attention_block(ops_, layer, c, seq_len_, state_, r, l, pos);
    ffn_block(ops_, layer, c, r);
  }
}

}  // namespace pocketlm
