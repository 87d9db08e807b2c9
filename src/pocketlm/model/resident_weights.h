// ResidentWeights: every weight in the arena, in the layout the kernel backend reads (rows
// interleaved per matrix for SIMD backends, chosen per tensor type), loaded once from storage
// in bounded chunks. The WeightSource for models that fit in RAM.
#pragma once

#include <cstddef>
#include <cstdint>

#include "pocketlm/format/model_spec.h"
#include "pocketlm/io/storage.h"
#include "pocketlm/kernels/kernels.h"
#include "pocketlm/memory/arena.h"
#include "pocketlm/model/weight_source.h"

namespace pocketlm {

inline constexpr const char* kLayerTableRegion = "layer table";
inline constexpr const char* kRepackRegion = "repack scratch";

class ResidentWeights final : public WeightSource {
 public:
  // Carves every tensor the model reads (in file order), the layer table and the load-time
  // repack scratch. Errors: a tensor type `kernels` has no matmul for (kUnsupported), a norm
  // that is not f32 (kUnsupported), arena exhausted (kOutOfMemory).
  Status carve(const ModelSpec& spec, const Kernels& kernels, Arena& arena);
  // Reads every tensor from `storage` into its slot, at most `chunk_bytes` per read; matrices
  // with interleaved rows go through the repack scratch, one block of rows at a time.
  Status load(Storage& storage, std::size_t chunk_bytes);

  const LayerWeights& layer(int l) override { return layers_[l]; }
  void embedding_row(int token, float* out) override { dequantize_matrix_row(token_embedding_, token, out); }
  const float* final_norm() override { return rms_final_.f32(); }
  const Matrix& classifier() override { return wcls_; }
  std::uint64_t bytes_per_token() const override { return bytes_per_token_; }

 private:
  // The slot a tensor is loaded into; nullptr for tensors no model kind reads.
  Matrix* slot(const TensorInfo& t);
  Status load_matrix(Storage& storage, const TensorInfo& t, const Matrix& m, std::size_t chunk_bytes);

  const ModelSpec* spec_ = nullptr;
  Matrix token_embedding_;
  Matrix rms_final_;
  Matrix wcls_;  // a copy of token_embedding_ when the classifier is shared
  LayerWeights* layers_ = nullptr;
  unsigned char* repack_values_ = nullptr;  // one block of interleaved rows, values
  float* repack_scales_ = nullptr;          // and scales
  std::uint64_t bytes_per_token_ = 0;
};

}  // namespace pocketlm
