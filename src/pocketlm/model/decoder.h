// Decoder: what every Llama-family kind shares behind the Model interface (model/model.h) —
// the weights where the plan put them (PlacedWeights), the block ops, the run state of one
// token and of a prefill block, the embedding lookup, the final RMSNorm and the classifier —
// so that a kind (model/llama.cpp, or any kind of model/model_kind.cpp) writes only its pass through
// the layers, once, over rows of tokens (model/blocks.h: TokenRows).
#pragma once

#include <cstdint>

#include "pocketlm/model/blocks.h"
#include "pocketlm/model/model.h"
#include "pocketlm/model/placed_weights.h"

namespace pocketlm {

class Decoder : public Model {
 public:
  Status carve(const ModelSpec& spec, int seq_len, const Kernels& kernels, const WeightPlacement& placement, KvType kv,
               Arena& arena) override;
  Status load(Storage& storage, std::size_t chunk_bytes, ReadQueue* queue) override {
    return weights_.load(storage, chunk_bytes, queue);
  }
  Status status() const override { return weights_.status(); }
  void settle() override { weights_.settle(); }
  void clear_status() override { weights_.clear_status(); }
  void set_abort(const std::atomic<int>* flag) override { weights_.set_abort(flag); }
  void set_parallel(Parallel* parallel) override { ops_.set_parallel(parallel); }
  // x = the token's embedding row, the kind's layers, then the final RMSNorm and the classifier.
  float* forward(int token, int pos) final;
  Status carve_prefill(int batch, Arena& arena) override;
  int prefill_batch() const final { return batch_.batch > 1 ? batch_.batch : 1; }
  // As forward() for each token, through the last layer only (no logits), over one block.
  void forward_batch(const std::int32_t* tokens, int count, int pos) final;

  const ModelSpec& spec() const final { return *spec_; }
  int seq_len() const final { return seq_len_; }
  std::uint64_t weight_bytes_per_token() const final { return weights_.bytes_per_token(); }

 protected:
  // Reads the kind's own rows for tokens[0..count) (the rows of its own row-gather tables) after
  // their embedding rows and before the first streamed weight is asked for; none by default.
  virtual void gather_rows(const std::int32_t* /*tokens*/, int /*count*/) {}
  // The kind's pass through its layers for the r.count tokens `tokens` at positions
  // pos..pos+count-1, whose embedding rows are in r.x; leaves the residual stream in r.x.
  virtual void layers(const std::int32_t* tokens, const TokenRows& r, int pos) = 0;

  const ModelSpec* spec_ = nullptr;
  int seq_len_ = 0;
  PlacedWeights weights_;
  BlockOps ops_;
  DecoderState state_;
  BatchState batch_;
};

}  // namespace pocketlm
