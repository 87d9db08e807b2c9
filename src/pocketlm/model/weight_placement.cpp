#include "pocketlm/model/weight_placement.h"

namespace pocketlm {

bool WeightPlacement::in_storage(const TensorInfo& t, int n_layers, bool shared_classifier) const {
  const RoleInfo& r = role_info(t.role);
  if (r.use == TensorUse::kRowGather) return table_in_storage;
  if (t.role == TensorRole::kWcls) return shared_classifier ? table_in_storage : classifier_in_storage;
  return r.per_layer && r.use == TensorUse::kMatmul && t.layer >= n_layers - streamed_layers;
}

StorageCost storage_cost(const ModelSpec& spec, const WeightPlacement& p) {
  StorageCost c;
  const int layers = spec.config.n_layers;
  for (int i = 0; i < spec.tensor_count(); ++i) {
    const TensorInfo t = spec.tensor(i);
    if (!p.in_storage(t, layers, spec.shared_classifier)) continue;
    c.stored_bytes += t.bytes();
    if (role_info(t.role).use == TensorUse::kRowGather) {
      c.bytes_per_token += t.bytes() / t.rows;  // one row per token
      if (t.role == TensorRole::kTokenEmbedding && spec.shared_classifier)
        c.bytes_per_token += t.bytes();  // and the classifier, whole
    } else {
      c.bytes_per_token += t.bytes();
    }
  }
  return c;
}

}  // namespace pocketlm
