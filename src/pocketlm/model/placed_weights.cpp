#include "pocketlm/model/placed_weights.h"

#include <cstring>

#include "pocketlm/base/format.h"
#include "pocketlm/io/storage.h"

namespace pocketlm {

Matrix* PlacedWeights::slot(const TensorInfo& t) {
  if (t.layer >= 0) return layers_ ? &layers_[t.layer][t.role] : nullptr;
  const int g = global_slot(t.role);
  return g >= 0 ? &global_[g] : nullptr;
}

Status PlacedWeights::carve(const ModelSpec& spec, const WeightPlacement& placement, const Kernels& kernels,
                           Arena& arena) {
  spec_ = &spec;
  const ModelConfig& c = spec.config;
  POCKETLM_TRY(carve_array(arena, kLayerTableRegion, static_cast<std::uint64_t>(c.n_layers), &layers_));
  if (layers_)
    for (int l = 0; l < c.n_layers; ++l) layers_[l] = LayerWeights{};

  // Weights in file order, so that loading reads the file front to back.
  bytes_per_token_ = 0;
  row_value_bytes_ = row_scale_bytes_ = 0;
  for (bool& stored : global_stored_) stored = false;
  std::uint64_t repack_values = 0, repack_scales = 0;
  for (int i = 0; i < spec.tensor_count(); ++i) {
    const TensorInfo t = spec.tensor(i);
    const char* region = t.schema->region;
    if (*region == '\0') continue;  // read by no model kind
    Matrix dummy;
    Matrix* m = layers_ || t.layer < 0 ? slot(t) : &dummy;  // measuring: layers_ is null
    if (!m) continue;
    const bool matrix = t.rows > 1;
    if (!matrix && t.type != TensorType::kF32)
      return Status::error(StatusCode::kUnsupported, "tensor %s: norm weights must be f32, not %s",
                           t.schema->name, type_name(t.type));
    // A row-gather table is only dequantized row by row, unless it is also the classifier.
    const TensorUse use = t.schema->use;
    if (matrix && (use != TensorUse::kRowGather || (t.role == TensorRole::kTokenEmbedding && spec.shared_classifier)))
      POCKETLM_TRY(check_kernels_cover(kernels, t.type, t.schema->name));
    m->type = t.type;
    m->rows = static_cast<int>(t.rows);
    m->cols = static_cast<int>(t.cols);
    m->group = t.group;
    m->interleave = matrix ? interleave_of(kernels, t.type, t.group) : 1;
    m->values = nullptr;  // stays null for a tensor left in storage (load() skips it)
    m->scales = nullptr;
    // Per token every matrix and norm is read whole; a row-gather table one row.
    bytes_per_token_ += use == TensorUse::kRowGather ? t.bytes() / t.rows : t.bytes();
    const bool stored = placement.in_storage(t);
    if (use == TensorUse::kRowGather && stored) {
      if (t.value_bytes / t.rows > row_value_bytes_) row_value_bytes_ = t.value_bytes / t.rows;
      if (t.scale_bytes / t.rows > row_scale_bytes_) row_scale_bytes_ = t.scale_bytes / t.rows;
    }
    if (t.layer < 0 && global_slot(t.role) >= 0) global_stored_[global_slot(t.role)] = stored;  // for row()
    if (stored) continue;  // see below
    unsigned char* values = nullptr;
    POCKETLM_TRY(carve_array(arena, region, t.value_bytes, &values));
    m->values = values;
    if (t.scale_bytes) {
      float* scales = nullptr;
      POCKETLM_TRY(carve_array(arena, region, t.scale_bytes / sizeof(float), &scales));
      m->scales = scales;
    }
    if (m->interleave > 1 && t.rows >= static_cast<std::uint64_t>(m->interleave)) {
      const auto il = static_cast<std::uint64_t>(m->interleave);
      const std::uint64_t v = il * row_value_bytes(t.type, static_cast<std::size_t>(t.cols), t.group);
      const std::uint64_t s = il * row_scale_bytes(t.type, static_cast<std::size_t>(t.cols), t.group);
      if (v > repack_values) repack_values = v;
      if (s > repack_scales) repack_scales = s;
    }
  }
  Matrix& wcls = global_[global_slot(TensorRole::kWcls)];
  if (spec.shared_classifier) {
    wcls = global_[global_slot(TensorRole::kTokenEmbedding)];
    bytes_per_token_ += spec.tensor(TensorRole::kTokenEmbedding, -1).bytes();
  }
  // Weights in storage: one row buffer for the row-gather tables, the streamed matrices' buffers.
  if (row_value_bytes_) POCKETLM_TRY(carve_array(arena, kStreamRegion, row_value_bytes_, &row_values_));
  if (row_scale_bytes_) POCKETLM_TRY(carve_array(arena, kStreamRegion, row_scale_bytes_ / sizeof(float), &row_scales_));
  POCKETLM_TRY(stream_.carve(spec, placement, kernels, arena));
  if (layers_) {  // a real arena: point the stored matrices at their stream entries
    for (int i = 0; i < stream_.count(); ++i) {
      const StreamedMatrix& m = stream_.matrix(i);
      if (m.info.layer >= 0) {
        layers_[m.info.layer][m.info.role].stream = &m;
      } else {
        global_[global_slot(m.info.role)] = Matrix{m.info.type, static_cast<int>(m.info.rows),
                                                   static_cast<int>(m.info.cols), nullptr, nullptr, m.info.group,
                                                   m.interleave, &m};
      }
    }
  }
  // Load-time scratch for one block of rows being interleaved.
  if (repack_values) POCKETLM_TRY(carve_array(arena, kRepackRegion, repack_values, &repack_values_));
  if (repack_scales) POCKETLM_TRY(carve_array(arena, kRepackRegion, repack_scales / sizeof(float), &repack_scales_));
  return Status();
}

namespace {

// Refuses rows [r0, r0 + rows) of tensor t, just read into memory in row-major order, when one
// of their floats is NaN or infinite: such a file is corrupt, and on a PSP, whose FPU traps on
// overflow, it could halt the console mid-story.
Status check_finite(const Storage& storage, const TensorInfo& t, std::size_t r0, const void* values,
                    const float* scales, std::size_t rows) {
  NonFinite bad;
  if (!find_non_finite(t.type, values, scales, rows, static_cast<std::size_t>(t.cols), t.group, &bad))
    return Status();
  const std::uint64_t element = static_cast<std::uint64_t>(r0) * t.cols + bad.element;
  const char* what = bad.value != bad.value ? "NaN" : bad.value > 0 ? "+inf" : "-inf";
  char layer[24] = "";
  if (t.layer >= 0) format_to(layer, sizeof layer, " (layer %d)", t.layer);
  if (bad.in_scales)
    return Status::error(StatusCode::kBadFormat,
                         "%s: tensor %s%s has a %s scale for elements %llu..%llu; pocketlm refuses non-finite weights",
                         storage.name(), t.schema->name, layer, what, static_cast<unsigned long long>(element),
                         static_cast<unsigned long long>(element + static_cast<std::uint64_t>(block_elements(t.type, t.group)) - 1));
  return Status::error(StatusCode::kBadFormat, "%s: tensor %s%s element %llu is %s; pocketlm refuses non-finite weights",
                       storage.name(), t.schema->name, layer, static_cast<unsigned long long>(element), what);
}

}  // namespace

Status PlacedWeights::load_matrix(Storage& storage, const TensorInfo& t, const Matrix& m, std::size_t chunk_bytes) {
  const auto n = static_cast<std::size_t>(t.cols), d = static_cast<std::size_t>(t.rows);
  const auto il = static_cast<std::size_t>(m.interleave);
  const std::size_t rv = row_value_bytes(t.type, n, t.group), rs = row_scale_bytes(t.type, n, t.group);
  auto* values = static_cast<unsigned char*>(const_cast<void*>(m.values));
  auto* scales = reinterpret_cast<unsigned char*>(const_cast<float*>(m.scales));
  // Full blocks of il rows through the scratch, then the tail rows (or the whole matrix)
  // straight into place.
  const std::size_t full = il > 1 ? d / il * il : 0;
  const TypeTraits& traits = type_traits(t.type);
  for (std::size_t r = 0; r < full; r += il) {
    POCKETLM_TRY(read_chunked(storage, t.offset + r * rv, repack_values_, il * rv, chunk_bytes));
    if (rs) POCKETLM_TRY(read_chunked(storage, t.scales_offset() + r * rs, repack_scales_, il * rs, chunk_bytes));
    POCKETLM_TRY(check_finite(storage, t, r, repack_values_, rs ? repack_scales_ : nullptr, il));
    traits.interleave_rows(values + r * rv, rs ? reinterpret_cast<float*>(scales + r * rs) : nullptr, repack_values_,
                           repack_scales_, n, static_cast<std::size_t>(t.group), il);
  }
  POCKETLM_TRY(read_chunked(storage, t.offset + full * rv, values + full * rv, (d - full) * rv, chunk_bytes));
  if (rs) POCKETLM_TRY(read_chunked(storage, t.scales_offset() + full * rs, scales + full * rs, (d - full) * rs, chunk_bytes));
  return check_finite(storage, t, full, values + full * rv, rs ? reinterpret_cast<const float*>(scales + full * rs) : nullptr,
                      d - full);
}

Status PlacedWeights::load(Storage& storage, std::size_t chunk_bytes, ReadQueue* queue) {
  for (int i = 0; i < spec_->tensor_count(); ++i) {
    const TensorInfo t = spec_->tensor(i);
    if (*t.schema->region == '\0') continue;
    const Matrix* m = slot(t);
    if (!m || !m->values) continue;  // left in storage (carve gave it no memory)
    POCKETLM_TRY(load_matrix(storage, t, *m, chunk_bytes));
  }
  storage_ = &storage;
  chunk_bytes_ = chunk_bytes;
  stream_.bind(&storage, queue, chunk_bytes);
  return Status();
}

void PlacedWeights::row(TensorRole role, int token, float* out) {
  const int g = global_slot(role);
  if (!global_stored_[g]) {
    dequantize_matrix_row(global_[g], token, out);
    return;
  }
  // The table stays in storage: read this token's row (values, then its scales).
  const TensorInfo t = spec_->tensor(role, -1);
  const auto n = static_cast<std::size_t>(t.cols);
  const std::size_t rv = row_value_bytes(t.type, n, t.group), rs = row_scale_bytes(t.type, n, t.group);
  const auto r = static_cast<std::uint64_t>(token);
  stream_.settle();  // the storage serves one reader at a time
  Status st = read_chunked(*storage_, t.offset + r * rv, row_values_, rv, chunk_bytes_);
  if (st.ok() && rs) st = read_chunked(*storage_, t.scales_offset() + r * rs, row_scales_, rs, chunk_bytes_);
  if (st.ok()) st = check_finite(*storage_, t, static_cast<std::size_t>(token), row_values_, row_scales_, 1);
  if (!st.ok()) {
    if (status_.ok()) status_ = st;
    std::memset(out, 0, n * sizeof(float));
    return;
  }
  type_traits(t.type).dequantize(row_values_, row_scales_, static_cast<int>(n), t.group, out);
}

}  // namespace pocketlm
