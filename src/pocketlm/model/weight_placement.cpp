#include "pocketlm/model/weight_placement.h"

namespace pocketlm {

namespace {

bool is_matrix_role(TensorRole r) {
  using R = TensorRole;
  return r == R::kWq || r == R::kWk || r == R::kWv || r == R::kWo || r == R::kW1 || r == R::kW2 || r == R::kW3;
}

}  // namespace

bool WeightPlacement::in_storage(const TensorInfo& t, int n_layers, bool shared_classifier) const {
  switch (t.role) {
    case TensorRole::kTokenEmbedding: return table_in_storage;
    case TensorRole::kWcls: return shared_classifier ? table_in_storage : classifier_in_storage;
    default: return is_matrix_role(t.role) && t.layer >= n_layers - streamed_layers;
  }
}

StorageCost storage_cost(const ModelSpec& spec, const WeightPlacement& p) {
  StorageCost c;
  const int layers = spec.config.n_layers;
  for (int i = 0; i < spec.tensor_count(); ++i) {
    const TensorInfo t = spec.tensor(i);
    if (!p.in_storage(t, layers, spec.shared_classifier)) continue;
    c.stored_bytes += t.bytes();
    if (t.role == TensorRole::kTokenEmbedding) {
      c.bytes_per_token += t.bytes() / t.rows;                 // one row per token
      if (spec.shared_classifier) c.bytes_per_token += t.bytes();  // and the classifier, whole
    } else {
      c.bytes_per_token += t.bytes();
    }
  }
  return c;
}

}  // namespace pocketlm
