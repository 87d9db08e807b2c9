#include "pocketlm/format/model_spec.h"

namespace pocketlm {

const char* format_name(ModelFormat format) {
  switch (format) {
    case ModelFormat::kLlama2cV0: return "llama2.c v0 (legacy fp32)";
    case ModelFormat::kLlama2cV1: return "llama2.c v1 (fp32)";
    case ModelFormat::kLlama2cV2: return "llama2.c v2 (q80)";
  }
  return "?";
}

const char* dtype_name(DType dtype) { return dtype == DType::kF32 ? "f32" : "q8_0"; }

const char* tensor_kind_name(TensorKind kind) {
  static const char* const kNames[] = {"token_embedding", "rms_att", "wq", "wk", "wv", "wo", "rms_ffn",
                                       "w1", "w2", "w3", "rms_final", "freq_cis_real", "freq_cis_imag",
                                       "wcls"};
  int i = static_cast<int>(kind);
  return i >= 0 && i < static_cast<int>(TensorKind::kCount) ? kNames[i] : "?";
}

bool is_per_layer(TensorKind kind) {
  switch (kind) {
    case TensorKind::kRmsAtt: case TensorKind::kWq: case TensorKind::kWk: case TensorKind::kWv:
    case TensorKind::kWo: case TensorKind::kRmsFfn: case TensorKind::kW1: case TensorKind::kW2:
    case TensorKind::kW3:
      return true;
    default:
      return false;
  }
}

void ModelSpec::shape(TensorKind kind, std::uint64_t* rows, std::uint64_t* cols) const {
  const auto dim = static_cast<std::uint64_t>(config.dim);
  const auto hidden = static_cast<std::uint64_t>(config.hidden_dim);
  const auto kv_dim = static_cast<std::uint64_t>(config.kv_dim());
  const auto vocab = static_cast<std::uint64_t>(config.vocab_size);
  *rows = 1;
  switch (kind) {
    case TensorKind::kTokenEmbedding: case TensorKind::kWcls: *rows = vocab; *cols = dim; break;
    case TensorKind::kRmsAtt: case TensorKind::kRmsFfn: case TensorKind::kRmsFinal: *cols = dim; break;
    case TensorKind::kWq: case TensorKind::kWo: *rows = dim; *cols = dim; break;
    case TensorKind::kWk: case TensorKind::kWv: *rows = kv_dim; *cols = dim; break;
    case TensorKind::kW1: case TensorKind::kW3: *rows = hidden; *cols = dim; break;
    case TensorKind::kW2: *rows = dim; *cols = hidden; break;
    case TensorKind::kFreqCisReal: case TensorKind::kFreqCisImag:
      *rows = static_cast<std::uint64_t>(config.seq_len);
      *cols = static_cast<std::uint64_t>(config.head_size() / 2);
      break;
    default: *cols = 0; break;
  }
}

DType ModelSpec::dtype(TensorKind kind) const {
  if (format != ModelFormat::kLlama2cV2) return DType::kF32;
  std::uint64_t rows = 0, cols = 0;
  shape(kind, &rows, &cols);
  return rows > 1 ? DType::kQ8_0 : DType::kF32;  // v2 keeps norm vectors in fp32
}

int ModelSpec::tensor_count() const {
  int n = 0;
  for (int i = 0; i < order_count_; ++i) n += is_per_layer(order_[i]) ? config.n_layers : 1;
  return n;
}

TensorInfo ModelSpec::tensor(int index) const {
  for (int i = 0; i < order_count_; ++i) {
    const int n = is_per_layer(order_[i]) ? config.n_layers : 1;
    if (index < n) return tensor(order_[i], index);
    index -= n;
  }
  return TensorInfo{};
}

TensorInfo ModelSpec::tensor(TensorKind kind, int layer) const {
  TensorInfo t;
  t.kind = kind;
  t.layer = is_per_layer(kind) ? layer : -1;
  shape(kind, &t.rows, &t.cols);
  t.dtype = dtype(kind);
  const KindLayout& k = kinds_[static_cast<int>(kind)];
  // Offsets were range-checked against the file size when the spec was read.
  t.offset = k.base + (t.layer < 0 ? 0 : static_cast<std::uint64_t>(t.layer) * k.stride);
  if (t.dtype == DType::kF32) {
    t.data_bytes = t.numel() * 4;
  } else {
    t.data_bytes = t.numel();
    t.scales_offset = t.offset + t.data_bytes;
    t.scales_bytes = t.numel() / static_cast<std::uint64_t>(group_size) * 4;
  }
  return t;
}

}  // namespace pocketlm
