// The Llama-2 decoder of llama2.c (RMSNorm, RoPE, grouped-query attention, SwiGLU FFN): the
// forward pass of run.c (fp32) and runq.c (q80), built from the shared blocks, over weights
// from a WeightSource.
#pragma once

#include "pocketlm/model/blocks.h"
#include "pocketlm/model/model.h"
#include "pocketlm/model/placed_weights.h"

namespace pocketlm {

class LlamaModel final : public Model {
 public:
  Status carve(const ModelSpec& spec, int seq_len, const Kernels& kernels, const WeightPlacement& placement, KvType kv,
               Arena& arena) override;
  Status load(Storage& storage, std::size_t chunk_bytes, ReadQueue* queue) override {
    return weights_.load(storage, chunk_bytes, queue);
  }
  Status status() const override { return weights_.status(); }
  void settle() override { weights_.settle(); }
  void set_parallel(Parallel* parallel) override { ops_.set_parallel(parallel); }
  float* forward(int token, int pos) override;
  Status carve_prefill(int batch, Arena& arena) override;
  int prefill_batch() const override { return batch_.batch > 1 ? batch_.batch : 1; }
  void forward_batch(const std::int32_t* tokens, int count, int pos) override;

  const ModelSpec& spec() const override { return *spec_; }
  int seq_len() const override { return seq_len_; }
  std::uint64_t weight_bytes_per_token() const override { return weights_.bytes_per_token(); }

 private:
  const ModelSpec* spec_ = nullptr;
  int seq_len_ = 0;
  PlacedWeights weights_;
  BlockOps ops_;
  DecoderState state_;
  BatchState batch_;
};

}  // namespace pocketlm
