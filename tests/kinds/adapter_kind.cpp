// A test-only model kind, `adapter`: a Llama-2 decoder whose every layer, after its FFN, adds a
// low-rank adapter to the residual stream, x += adapter_up · (adapter_down · x), with
// adapter_down [R, dim] and adapter_up [dim, R], R its hyperparameter adapter_rank (GGUF key
// adapter.adapter.rank). It exists to show that a kind is its row, its file, its blocks and
// its trainer module (train/kinds/adapter.py): nothing of the engine names it. This file is
// all three engine parts and adds the kind at start-up (tests/CMakeLists.txt links it into the
// probe and the kind tests).
#include "adapter_kind.h"

#include "pocketlm/base/checked.h"
#include "pocketlm/model/decoder.h"
#include "pocketlm/model/model_kind.h"

namespace pocketlm::test {

namespace {

constexpr int kRankParam = 0;
constexpr const char* kAdapterRegion = "adapter weights";

// The row: llama's keys and tensors, the rank, and the two matrices read after w2.
constexpr Architecture make_adapter() {
  Architecture a = extend_architecture(kLlamaArchitecture, "adapter",
                                       {"adapter.rank", kind_param_field(kRankParam), true}, "adapter_rank");
  add_kind_role(a, kAdapterDown,
                {"adapter_down", "blk.%d.adapter_down.weight", true, TensorUse::kMatmul, param_extent(kRankParam),
                 Extent::kDim, kAdapterRegion},
                TensorRole::kW2);
  add_kind_role(a, kAdapterUp,
                {"adapter_up", "blk.%d.adapter_up.weight", true, TensorUse::kMatmul, Extent::kDim,
                 param_extent(kRankParam), kAdapterRegion},
                kAdapterDown);
  return a;
}
constexpr Architecture kAdapter = make_adapter();

// The block, for each row of r: mid = adapter_down · x, x += adapter_up · mid (through r.xb).
// `mid` holds r.count rows of R floats.
void adapter_block(BlockOps& ops, const LayerWeights& w, const ModelConfig& c, const TokenRows& r, float* mid) {
  const int dim = c.dim, rank = c.kind_params[kRankParam];
  const auto sdim = static_cast<std::size_t>(dim), srank = static_cast<std::size_t>(rank);
  ops.matmul(mid, srank, w[kAdapterDown], r.x, sdim, dim, r.count);
  ops.matmul(r.xb, sdim, w[kAdapterUp], mid, srank, rank, r.count);
  for (std::size_t i = 0; i < static_cast<std::size_t>(r.count) * sdim; ++i) r.x[i] += r.xb[i];
}

class AdapterModel final : public Decoder {
 public:
  Status carve(const ModelSpec& spec, int seq_len, const Kernels& kernels, const WeightPlacement& placement, KvType kv,
               Arena& arena) override {
    if (spec.config.kind_params[kRankParam] <= 0)
      return Status::error(StatusCode::kBadFormat, "model of architecture '%s': adapter_rank is %d, must be positive",
                           spec.architecture, spec.config.kind_params[kRankParam]);
    POCKETLM_TRY(Decoder::carve(spec, seq_len, kernels, placement, kv, arena));
    return carve_array(arena, region::kActivations, static_cast<std::uint64_t>(spec.config.kind_params[kRankParam]),
                       &mid_);
  }
  Status carve_prefill(int batch, Arena& arena) override {
    POCKETLM_TRY(Decoder::carve_prefill(batch, arena));
    std::uint64_t n = 0;
    if (!checked_product(&n, static_cast<std::uint64_t>(batch),
                         static_cast<std::uint64_t>(spec_->config.kind_params[kRankParam]), 1u))
      return Status::error(StatusCode::kOutOfMemory, "adapter: %d tokens x adapter_rank overflow", batch);
    return batch > 1 ? carve_array(arena, region::kPrefill, n, &batch_mid_) : Status();
  }

 protected:
  void layers(const std::int32_t* /*tokens*/, const TokenRows& r, int pos) override {
    const ModelConfig& c = spec_->config;
    for (int l = 0; l < c.n_layers; ++l) {
      const LayerWeights& layer = weights_.layer(l);
      attention_block(ops_, layer, c, seq_len_, state_, r, l, pos);
      ffn_block(ops_, layer, c, r);
      adapter_block(ops_, layer, c, r, r.count > 1 ? batch_mid_ : mid_);
    }
  }

 private:
  float* mid_ = nullptr;        // [R]: one token's adapter_down · x
  float* batch_mid_ = nullptr;  // [batch, R] for a block of prompt tokens
};

const ModelKind kAdapterKind = {&kAdapter, construct_model<AdapterModel>};

}  // namespace

const bool kAdapterAdded = add_model_kind(&kAdapterKind).ok();

}  // namespace pocketlm::test
