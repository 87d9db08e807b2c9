#include "pocketlm/model/weight_placement.h"

namespace pocketlm {

bool storable(const TensorInfo& t) {
  const RoleInfo& r = role_info(t.role);
  return (r.use == TensorUse::kMatmul || r.use == TensorUse::kRowGather) && t.layer < kMaxLayers;
}

bool WeightPlacement::in_storage(const TensorInfo& t) const {
  if (!storable(t)) return false;
  if (t.layer < 0) {
    const int g = global_slot(t.role);
    return g >= 0 && globals_[g];
  }
  const int s = layer_slot(t.role);
  return s >= 0 && (layers_[s][t.layer / 64] >> (t.layer % 64) & 1u) != 0;
}

Residency WeightPlacement::residency(const TensorInfo& t) const {
  if (!in_storage(t)) return Residency::kResident;
  return role_info(t.role).use == TensorUse::kRowGather ? Residency::kRowFetched : Residency::kStreamed;
}

bool WeightPlacement::keep_in_storage(const TensorInfo& t) {
  if (!storable(t)) return false;
  if (in_storage(t)) return true;
  if (t.layer < 0) {
    const int g = global_slot(t.role);
    if (g < 0) return false;
    globals_[g] = true;
  } else {
    const int s = layer_slot(t.role);
    if (s < 0) return false;
    layers_[s][t.layer / 64] |= std::uint64_t{1} << (t.layer % 64);
  }
  ++stored_count_;
  return true;
}

std::uint64_t stored_bytes_per_token(const ModelSpec& spec, const TensorInfo& t) {
  if (role_info(t.role).use != TensorUse::kRowGather) return t.bytes();
  const std::uint64_t row = t.bytes() / t.rows;
  return t.role == TensorRole::kTokenEmbedding && spec.shared_classifier ? row + t.bytes() : row;
}

StorageCost storage_cost(const ModelSpec& spec, const WeightPlacement& p) {
  StorageCost c;
  for (int i = 0; i < spec.tensor_count(); ++i) {
    const TensorInfo t = spec.tensor(i);
    if (!p.in_storage(t)) continue;
    c.stored_bytes += t.bytes();
    c.bytes_per_token += stored_bytes_per_token(spec, t);
  }
  return c;
}

}  // namespace pocketlm
