// PlacedWeights: every weight where the plan put it. Resident weights are in the arena, in the
// layout the kernel backend reads (rows interleaved per matrix for SIMD backends), loaded once
// in bounded chunks; weights in storage (WeightPlacement) are read per token: a row-gather
// table (the token embedding) one row at a time, streamed layers and the classifier block by block through
// model/weight_stream.h. The forward pass sees one WeightSource either way.
#pragma once

#include <cstddef>
#include <cstdint>

#include "pocketlm/format/model_spec.h"
#include "pocketlm/io/read_queue.h"
#include "pocketlm/io/storage.h"
#include "pocketlm/kernels/kernels.h"
#include "pocketlm/memory/arena.h"
#include "pocketlm/model/weight_placement.h"
#include "pocketlm/model/weight_source.h"
#include "pocketlm/model/weight_stream.h"

namespace pocketlm {

inline constexpr const char* kLayerTableRegion = "layer table";
inline constexpr const char* kRepackRegion = "repack scratch";

class PlacedWeights final : public WeightSource {
 public:
  // Carves every resident tensor the model reads (in file order), the layer table, the
  // load-time repack scratch and, for weights in storage, the stream buffers. Errors: a tensor
  // type `kernels` has no matmul for (kUnsupported), a norm that is not f32 (kUnsupported),
  // arena exhausted (kOutOfMemory).
  Status carve(const ModelSpec& spec, const WeightPlacement& placement, const Kernels& kernels, Arena& arena);
  // Reads every resident tensor from `storage` into its slot, at most `chunk_bytes` per read;
  // matrices with interleaved rows go through the repack scratch, one block of rows at a time.
  // Weights in storage are read later through `queue` (null: inline reads); `storage` must
  // then outlive the session.
  Status load(Storage& storage, std::size_t chunk_bytes, ReadQueue* queue);

  void row(TensorRole role, int token, float* out) override;
  void begin_token() override { stream_.begin_token(); }
  void begin_layers() override { stream_.begin_token(/*classifier=*/false); }
  const LayerWeights& layer(int l) override { return layers_[l]; }
  Matrix stream_rows(const Matrix& m, int r0) override {
    return stream_.rows(*static_cast<const StreamedMatrix*>(m.stream), r0);
  }
  const Matrix& global(TensorRole role) override { return global_[global_slot(role)]; }
  const float* final_norm() override { return global_[global_slot(TensorRole::kRmsFinal)].f32(); }
  const Matrix& classifier() override { return global_[global_slot(TensorRole::kWcls)]; }
  std::uint64_t bytes_per_token() const override { return bytes_per_token_; }
  Status status() const override { return status_.ok() ? stream_.status() : status_; }
  // Waits for a read in flight.
  void settle() { stream_.settle(); }
  // Forgets an earlier call's read error (settled first): the next pass reads again.
  void clear_status() {
    stream_.settle();
    stream_.clear_status();
    status_ = Status();
  }
  void set_abort(const std::atomic<int>* flag) { stream_.set_abort(flag); }

 private:
  // The slot a tensor is loaded into; nullptr for tensors no model kind reads.
  Matrix* slot(const TensorInfo& t);
  Status load_matrix(Storage& storage, const TensorInfo& t, const Matrix& m, std::size_t chunk_bytes);

  const ModelSpec* spec_ = nullptr;
  // The global tensors by global_slot(); the classifier's is a copy of the embedding table's
  // when the classifier is shared.
  Matrix global_[kGlobalRoleCount];
  bool global_stored_[kGlobalRoleCount] = {};  // kept in storage (row() reads rows from there)
  LayerWeights* layers_ = nullptr;
  unsigned char* repack_values_ = nullptr;  // one block of interleaved rows, values
  float* repack_scales_ = nullptr;          // and scales
  unsigned char* row_values_ = nullptr;     // one row of a row-gather table read from storage
  float* row_scales_ = nullptr;
  std::uint64_t row_value_bytes_ = 0;       // their sizes: the widest row-gather row in storage
  std::uint64_t row_scale_bytes_ = 0;
  WeightStream stream_;
  Storage* storage_ = nullptr;
  std::size_t chunk_bytes_ = 64 * 1024;
  std::uint64_t bytes_per_token_ = 0;
  Status status_;
};

}  // namespace pocketlm
