// The file schema of the per-layer-embedding (PLE) kind, architecture `pocketlm-ple`
// (model/ple.h runs it; docs/ple.md): llama's keys and tensors under its own prefix, plus its
// hyperparameter P, its tensors, the plan regions that hold them and where a token reads them.
#pragma once

#include "pocketlm/format/architecture.h"

namespace pocketlm {

// P (key embedding_length_per_layer_input): the width of each layer's slice of the per-layer
// table and of its gate.
inline constexpr int kPerLayerDimParam = 0;
inline constexpr Extent kPerLayerDim = param_extent(kPerLayerDimParam);
inline constexpr Extent kAllLayersPerLayerDim = all_layers_param_extent(kPerLayerDimParam);
inline int per_layer_dim(const ModelConfig& c) { return c.kind_params[kPerLayerDimParam]; }

// The kind's tensors: the table (one row of L x P per token), its projection from the
// embedding and the projection's norm; per layer the gate, the projection back into the
// residual stream and its norm. The GGUF names are llama.cpp's for Gemma 3n's tensors.
inline constexpr TensorRole kPleTable = kind_global_role(0);
inline constexpr TensorRole kPleProj = kind_global_role(1);
inline constexpr TensorRole kPleProjNorm = kind_global_role(2);
inline constexpr TensorRole kPleGate = kind_layer_role(0);
inline constexpr TensorRole kPleOut = kind_layer_role(1);
inline constexpr TensorRole kPlePostNorm = kind_layer_role(2);

// Its plan regions (its norms are with the others, region::kNorms).
inline constexpr const char* kPleTableRegion = "per-layer table";      // one row of L x P per token
inline constexpr const char* kPleWeightsRegion = "per-layer weights";  // the projection, gates, outputs

// The row (an object, not a function, so that the registries' tables of kinds are constant-
// initialized: a kind added at start-up may look them up before main).
extern const Architecture kPleArchitecture;

}  // namespace pocketlm
