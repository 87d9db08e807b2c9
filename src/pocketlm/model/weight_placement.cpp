#include "pocketlm/model/weight_placement.h"

namespace pocketlm {

bool storable(const TensorInfo& t) {
  const RoleInfo& r = *t.schema;
  return (r.use == TensorUse::kMatmul || r.use == TensorUse::kRowGather) && t.layer < kMaxLayers;
}

WeightPlacement::Flag WeightPlacement::flag(const TensorInfo& t) const {
  if (!storable(t)) return {};
  auto* self = const_cast<WeightPlacement*>(this);  // one lookup for both the reader and the writer
  if (t.layer < 0) {
    const int g = global_slot(t.role);
    return g < 0 ? Flag{} : Flag{&self->globals_, std::uint64_t{1} << g};
  }
  const int s = layer_slot(t.role);
  return s < 0 ? Flag{} : Flag{&self->layers_[s][t.layer / 64], std::uint64_t{1} << (t.layer % 64)};
}

bool WeightPlacement::in_storage(const TensorInfo& t) const {
  const Flag f = flag(t);
  return f.word && (*f.word & f.bit) != 0;
}

Residency WeightPlacement::residency(const TensorInfo& t) const {
  if (!in_storage(t)) return Residency::kResident;
  return t.schema->use == TensorUse::kRowGather ? Residency::kRowFetched : Residency::kStreamed;
}

bool WeightPlacement::keep_in_storage(const TensorInfo& t) {
  const Flag f = flag(t);
  if (!f.word) return false;
  if ((*f.word & f.bit) == 0) ++stored_count_;
  *f.word |= f.bit;
  return true;
}

std::uint64_t stored_bytes_per_token(const ModelSpec& spec, const TensorInfo& t) {
  if (t.schema->use != TensorUse::kRowGather) return t.bytes();
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
