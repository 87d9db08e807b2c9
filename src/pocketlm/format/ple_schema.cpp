#include "pocketlm/format/ple_schema.h"

namespace pocketlm {

namespace {

// Llama's row, its one key, and its tensors where a token reads them: the table row, its
// projection and norm right after the embedding row; in each layer the gate, output and
// post-norm after the FFN.
constexpr Architecture make_ple() {
  Architecture a = extend_architecture(kLlamaArchitecture, "pocketlm-ple",
                                       {"embedding_length_per_layer_input", kind_param_field(kPerLayerDimParam), true},
                                       "per_layer_dim");
  using U = TensorUse;
  add_kind_role(a, kPleTable,
                {"ple_table", "per_layer_token_embd.weight", false, U::kRowGather, Extent::kVocab,
                 kAllLayersPerLayerDim, kPleTableRegion},
                TensorRole::kTokenEmbedding);
  add_kind_role(a, kPleProj,
                {"ple_proj", "per_layer_model_proj.weight", false, U::kMatmul, kAllLayersPerLayerDim, Extent::kDim,
                 kPleWeightsRegion},
                kPleTable);
  add_kind_role(a, kPleProjNorm,
                {"ple_proj_norm", "per_layer_proj_norm.weight", false, U::kNorm, Extent::kOne, kPerLayerDim,
                 region::kNorms},
                kPleProj);
  add_kind_role(a, kPleGate,
                {"ple_gate", "blk.%d.inp_gate.weight", true, U::kMatmul, kPerLayerDim, Extent::kDim, kPleWeightsRegion},
                TensorRole::kW2);
  add_kind_role(a, kPleOut,
                {"ple_out", "blk.%d.proj.weight", true, U::kMatmul, Extent::kDim, kPerLayerDim, kPleWeightsRegion},
                kPleGate);
  add_kind_role(a, kPlePostNorm,
                {"ple_post_norm", "blk.%d.post_norm.weight", true, U::kNorm, Extent::kOne, Extent::kDim,
                 region::kNorms},
                kPleOut);
  return a;
}

}  // namespace

constexpr Architecture kPleArchitecture = make_ple();

}  // namespace pocketlm
