// ModelSpec: what a checkpoint header says — the config, the quantization group size and
// where every tensor lives in the file — validated before a single weight byte is read.
#pragma once

#include <cstdint>

namespace pocketlm {

enum class ModelFormat { kLlama2cV0, kLlama2cV1, kLlama2cV2 };
enum class DType { kF32, kQ8_0 };

const char* format_name(ModelFormat format);  // "llama2.c v0 (legacy fp32)", ...
const char* dtype_name(DType dtype);           // "f32", "q8_0"

// The seven header integers of llama2.c, after validation (all positive).
struct ModelConfig {
  std::int32_t dim = 0;         // residual stream width
  std::int32_t hidden_dim = 0;  // SwiGLU FFN width
  std::int32_t n_layers = 0;
  std::int32_t n_heads = 0;     // query heads
  std::int32_t n_kv_heads = 0;  // key/value heads (GQA when < n_heads)
  std::int32_t vocab_size = 0;
  std::int32_t seq_len = 0;     // maximum context, tokens

  std::int32_t head_size() const { return dim / n_heads; }
  std::int32_t kv_dim() const { return dim / n_heads * n_kv_heads; }
};

enum class TensorKind {
  kTokenEmbedding, kRmsAtt, kWq, kWk, kWv, kWo, kRmsFfn, kW1, kW2, kW3, kRmsFinal,
  kFreqCisReal, kFreqCisImag, kWcls, kCount
};

const char* tensor_kind_name(TensorKind kind);  // "token_embedding", "wq", ...
bool is_per_layer(TensorKind kind);

// One tensor of the file. Matrices are row-major [rows, cols] = [out, in]; vectors have
// rows == 1. A q8_0 tensor is `rows*cols` int8 values at `offset` followed by
// rows*cols/group_size fp32 scales at `scales_offset`.
struct TensorInfo {
  TensorKind kind = TensorKind::kCount;
  int layer = -1;  // -1 for tensors shared by all layers
  std::uint64_t rows = 0, cols = 0;
  DType dtype = DType::kF32;
  std::uint64_t offset = 0;        // file offset of the values
  std::uint64_t data_bytes = 0;    // bytes of the values (4 per f32, 1 per int8)
  std::uint64_t scales_offset = 0;
  std::uint64_t scales_bytes = 0;  // 0 for f32
  std::uint64_t bytes() const { return data_bytes + scales_bytes; }
  std::uint64_t numel() const { return rows * cols; }
};

struct ModelSpec {
  ModelFormat format = ModelFormat::kLlama2cV0;
  ModelConfig config;
  bool shared_classifier = true;
  std::int32_t group_size = 0;  // q8_0 group size; 0 for fp32 files
  std::uint64_t header_bytes = 0;
  std::uint64_t file_bytes = 0;  // equals the size the header implies

  // Tensors in file order (per-layer kinds expand to n_layers entries).
  int tensor_count() const;
  TensorInfo tensor(int index) const;
  // The tensor of `kind` for `layer` (ignored for global tensors). Must be present.
  TensorInfo tensor(TensorKind kind, int layer) const;
  bool has(TensorKind kind) const { return kinds_[static_cast<int>(kind)].present; }
  DType dtype(TensorKind kind) const;

  // Filled by the reader: the file offset of each kind's first layer and the per-layer stride.
  struct KindLayout {
    bool present = false;
    std::uint64_t base = 0;
    std::uint64_t stride = 0;
  };
  KindLayout kinds_[static_cast<int>(TensorKind::kCount)];
  TensorKind order_[static_cast<int>(TensorKind::kCount)] = {};
  int order_count_ = 0;

  // Shape of a kind under this config.
  void shape(TensorKind kind, std::uint64_t* rows, std::uint64_t* cols) const;
};

}  // namespace pocketlm
