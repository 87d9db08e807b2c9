#include "pocketlm/model/weight_stream.h"

#include <cstring>

#include "pocketlm/base/format.h"
#include "pocketlm/format/architecture.h"

namespace pocketlm {

namespace {

// The streamed tensors in forward-pass order; calls f(TensorInfo) for each: global matrices
// read before the layers, each layer's matrices (norms always stay in RAM), global matrices
// read after them (the classifier).
template <typename F>
void for_each_streamed(const ModelSpec& spec, const WeightPlacement& p, F f) {
  using R = TensorRole;
  const Architecture* arch = spec.schema();
  if (!arch) return;  // no kind runs it: nothing is read
  const R* order = arch->forward;
  const int n = arch->forward_count;
  auto global = [&](R role) {
    // A shared classifier is the embedding table, row-fetched and streamed as the classifier.
    const R stored_as = role == R::kWcls && spec.shared_classifier ? R::kTokenEmbedding : role;
    if (!spec.has(stored_as) || !p.in_storage(spec.tensor(stored_as, -1))) return;
    TensorInfo t = spec.tensor(stored_as, -1);
    t.role = role;
    t.schema = &spec.role(role);
    f(t);
  };
  const auto matmul = [&spec](R role) { return spec.role(role).use == TensorUse::kMatmul; };
  for (int i = 0; i < n; ++i)
    if (matmul(order[i]) && read_before_layers(*arch, order[i])) global(order[i]);
  for (int l = 0; l < spec.config.n_layers; ++l)
    for (int i = 0; i < n; ++i)
      if (matmul(order[i]) && is_per_layer(order[i]) && spec.has(order[i]) && p.in_storage(spec.tensor(order[i], l)))
        f(spec.tensor(order[i], l));
  for (int i = 0; i < n; ++i)
    if (matmul(order[i]) && !is_per_layer(order[i]) && !read_before_layers(*arch, order[i])) global(order[i]);
}

}  // namespace

StreamBlock stream_block(const TensorInfo& t, std::size_t block_bytes, const Kernels& kernels) {
  const auto n = static_cast<std::size_t>(t.cols);
  const std::uint64_t row = row_value_bytes(t.type, n, t.group) + row_scale_bytes(t.type, n, t.group);
  std::uint64_t rows = block_bytes / row / kStreamBlockAlign * kStreamBlockAlign;
  if (rows < kStreamBlockAlign) rows = kStreamBlockAlign;
  if (rows > t.rows) rows = t.rows;
  StreamBlock b;
  b.rows = static_cast<int>(rows);
  b.bytes = row * static_cast<std::uint64_t>(b.rows);
  b.interleave = interleave_of(kernels, t.type, t.group);
  b.repacks = b.interleave > 1 && b.rows >= b.interleave;
  if (b.repacks) b.scratch = row * static_cast<std::uint64_t>(b.interleave);
  return b;
}

Status WeightStream::carve(const ModelSpec& spec, const WeightPlacement& p, const Kernels& kernels, Arena& arena) {
  count_ = 0;
  for_each_streamed(spec, p, [this](const TensorInfo&) { ++count_; });
  if (count_ == 0) return Status();
  POCKETLM_TRY(carve_array(arena, kStreamRegion, static_cast<std::uint64_t>(count_), &table_));
  std::uint64_t max_values = 0, max_scales = 0, scratch_values = 0, scratch_scales = 0;
  int i = 0;
  for_each_streamed(spec, p, [&](const TensorInfo& t) {
    const auto n = static_cast<std::size_t>(t.cols);
    const std::size_t rv = row_value_bytes(t.type, n, t.group), rs = row_scale_bytes(t.type, n, t.group);
    const StreamBlock b = stream_block(t, p.block_bytes, kernels);
    const auto il = static_cast<std::uint64_t>(b.interleave);
    if (b.repacks && rv * il > scratch_values) scratch_values = rv * il;
    if (b.repacks && rs * il > scratch_scales) scratch_scales = rs * il;
    const auto rows = static_cast<std::uint64_t>(b.rows);
    if (rv * rows > max_values) max_values = rv * rows;
    if (rs * rows > max_scales) max_scales = rs * rows;
    if (table_) table_[i] = StreamedMatrix{t, b.interleave, b.rows, i};
    ++i;
  });
  for (int s = 0; s < 2; ++s) {
    POCKETLM_TRY(carve_array(arena, kStreamRegion, max_values, &raw_values_[s]));
    if (max_scales) POCKETLM_TRY(carve_array(arena, kStreamRegion, max_scales / sizeof(float), &raw_scales_[s]));
  }
  if (scratch_values) POCKETLM_TRY(carve_array(arena, kStreamRegion, scratch_values, &scratch_values_));
  if (scratch_scales)
    POCKETLM_TRY(carve_array(arena, kStreamRegion, scratch_scales / sizeof(float), &scratch_scales_));
  return Status();
}

const StreamedMatrix* WeightStream::find(TensorRole role, int layer) const {
  for (int i = 0; table_ && i < count_; ++i)
    if (table_[i].info.role == role && table_[i].info.layer == layer) return &table_[i];
  return nullptr;
}

void WeightStream::bind(Storage* storage, ReadQueue* queue, std::size_t chunk_bytes) {
  storage_ = storage;
  queue_ = queue ? queue : &inline_queue_;
  chunk_bytes_ = chunk_bytes;
}

WeightStream::Block WeightStream::next_after(Block b) const {
  const StreamedMatrix& m = table_[b.matrix];
  if (b.r0 + m.block_rows < static_cast<int>(m.info.rows)) return Block{b.matrix, b.r0 + m.block_rows};
  // The token ends with the last matrix: the next token's first block is read when it begins,
  // so every token reads exactly its own bytes.
  return b.matrix + 1 < end_ ? Block{b.matrix + 1, 0} : Block{};
}

void WeightStream::submit(Block b, int slot) {
  const StreamedMatrix& m = table_[b.matrix];
  const TensorInfo& t = m.info;
  const auto n = static_cast<std::size_t>(t.cols);
  const std::size_t rv = row_value_bytes(t.type, n, t.group), rs = row_scale_bytes(t.type, n, t.group);
  const int rows = static_cast<int>(t.rows) - b.r0 < m.block_rows ? static_cast<int>(t.rows) - b.r0 : m.block_rows;
  ReadRequest r;
  r.storage = storage_;
  r.chunk_bytes = chunk_bytes_;
  r.count = rs ? 2 : 1;
  r.offset[0] = t.offset + static_cast<std::uint64_t>(b.r0) * rv;
  r.dst[0] = raw_values_[slot];
  r.bytes[0] = static_cast<std::size_t>(rows) * rv;
  if (rs) {
    r.offset[1] = t.scales_offset() + static_cast<std::uint64_t>(b.r0) * rs;
    r.dst[1] = raw_scales_[slot];
    r.bytes[1] = static_cast<std::size_t>(rows) * rs;
  }
  queue_->submit(r);
  in_flight_ = b;
  in_flight_slot_ = slot;
}

void WeightStream::begin_token(bool classifier) {
  settle();
  completed_ = Block{};
  end_ = count_;
  if (!classifier && count_ > 0 && table_[count_ - 1].info.role == TensorRole::kWcls) end_ = count_ - 1;
  if (end_ == 0) return;
  if (count_ > 0 && status_.ok()) submit(Block{0, 0}, 0);
}

void WeightStream::settle() {
  if (in_flight_.matrix < 0) return;
  const Status st = queue_->wait();
  if (!st.ok() && status_.ok()) status_ = st;
  completed_ = in_flight_;
  completed_slot_ = in_flight_slot_;
  in_flight_ = Block{};
}

bool WeightStream::fetch(Block b, int* slot) {
  if (in_flight_.matrix == b.matrix && in_flight_.r0 == b.r0) settle();
  if (completed_.matrix == b.matrix && completed_.r0 == b.r0) {
    *slot = completed_slot_;
  } else {
    // Out of order (the forward pass asked for another block): read this one now.
    settle();
    *slot = 0;
    submit(b, 0);
    settle();
  }
  completed_ = Block{};
  return status_.ok();
}

Matrix WeightStream::rows(const StreamedMatrix& m, int r0) {
  const TensorInfo& t = m.info;
  const int total = static_cast<int>(t.rows);
  const int rows = total - r0 < m.block_rows ? total - r0 : m.block_rows;
  const auto n = static_cast<std::size_t>(t.cols);
  const std::size_t rv = row_value_bytes(t.type, n, t.group), rs = row_scale_bytes(t.type, n, t.group);
  const Block b{m.index, r0};
  int slot = 0;
  // Between blocks is where a slow medium spends a token's time: the place to stop a call.
  if (abort_ && abort_->load(std::memory_order_relaxed) != 0 && status_.ok())
    status_ = Status::error(StatusCode::kAborted, "aborted: the abort flag was set (between weight blocks)");
  const bool ok = fetch(b, &slot) && status_.ok();
  // The next block streams in while this one is computed.
  const Block next = next_after(b);
  if (next.matrix >= 0 && status_.ok()) submit(next, 1 - slot);

  Matrix v;
  v.type = t.type;
  v.rows = rows;
  v.cols = static_cast<int>(t.cols);
  v.group = t.group;
  v.interleave = m.interleave;
  unsigned char* values = raw_values_[slot];
  float* scales = rs ? raw_scales_[slot] : nullptr;
  if (!ok) {  // zeros, never garbage; the session stops on status()
    std::memset(values, 0, static_cast<std::size_t>(rows) * rv);
    if (scales) std::memset(scales, 0, static_cast<std::size_t>(rows) * rs);
  } else {
    NonFinite bad;
    if (find_non_finite(t.type, values, scales, static_cast<std::size_t>(rows), n, t.group, &bad)) {
      char layer[24] = "";
      if (t.layer >= 0) format_to(layer, sizeof layer, " (layer %d)", t.layer);
      status_ = Status::error(StatusCode::kBadFormat,
                              "%s: tensor %s%s element %llu is not finite; pocketlm refuses non-finite weights",
                              storage_->name(), t.schema->name, layer,
                              static_cast<unsigned long long>(static_cast<std::uint64_t>(r0) * t.cols + bad.element));
      std::memset(values, 0, static_cast<std::size_t>(rows) * rv);
      if (scales) std::memset(scales, 0, static_cast<std::size_t>(rows) * rs);
    }
  }
  const int il = m.interleave;
  if (il > 1 && rows >= il) {
    // The backend's layout, in place: each full block of il rows copied out to the scratch and
    // interleaved back; the tail stays row-major. The read buffer is not read again (every
    // block is read anew), so the raw rows are not needed after this.
    const TypeTraits& traits = type_traits(t.type);
    const int full = rows / il * il;
    const std::size_t bv = static_cast<std::size_t>(il) * rv, bs = static_cast<std::size_t>(il) * rs;
    for (int r = 0; r < full; r += il) {
      unsigned char* block_values = values + static_cast<std::size_t>(r) * rv;
      float* block_scales = scales ? scales + static_cast<std::size_t>(r) * rs / sizeof(float) : nullptr;
      std::memcpy(scratch_values_, block_values, bv);
      if (block_scales) std::memcpy(scratch_scales_, block_scales, bs);
      traits.interleave_rows(block_values, block_scales, scratch_values_, block_scales ? scratch_scales_ : nullptr, n,
                             static_cast<std::size_t>(t.group), static_cast<std::size_t>(il));
    }
  }
  v.values = values;
  v.scales = scales;
  return v;
}

}  // namespace pocketlm
