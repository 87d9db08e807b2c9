// WeightPlacement: which weights stay in storage for one session, chosen by the planner
// (runtime/placement.h) when the RAM tiers cannot hold them all. Weights are placed by
// group, in the order that costs the fewest storage bytes per token:
// - the token-embedding table: one row is read per token (row-fetched), unless it is also
//   the classifier (llama2.c's shared classifier), which reads it whole every token;
// - the classifier [vocab_size, dim]: streamed whole every token;
// - whole decoder layers (the last ones): their seven matrices streamed every token, in
//   forward-pass order, through a few bounded buffers. Norm vectors always stay in RAM.
#pragma once

#include <cstddef>
#include <cstdint>

#include "pocketlm/format/model_spec.h"

namespace pocketlm {

struct WeightPlacement {
  bool table_in_storage = false;       // token-embedding table (and a shared classifier)
  bool classifier_in_storage = false;  // an unshared classifier
  int streamed_layers = 0;             // the last N decoder layers
  std::size_t block_bytes = 256 * 1024;  // target size of one streaming buffer

  bool any() const { return table_in_storage || classifier_in_storage || streamed_layers > 0; }
  // Whether tensor `t` of a model with `n_layers` layers stays in storage.
  bool in_storage(const TensorInfo& t, int n_layers, bool shared_classifier) const;
};

// Bytes of weights that stay in storage, and of those one token reads (the embedding row, the
// streamed matrices and classifier in full).
struct StorageCost {
  std::uint64_t stored_bytes = 0;
  std::uint64_t bytes_per_token = 0;
};
StorageCost storage_cost(const ModelSpec& spec, const WeightPlacement& placement);

}  // namespace pocketlm
