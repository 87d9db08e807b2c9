#include "pocketlm/format/model_spec.h"

#include "pocketlm/base/checked.h"
#include "pocketlm/base/status.h"

namespace pocketlm {

const char* format_name(ModelFormat format) {
  switch (format) {
    case ModelFormat::kLlama2cV0: return "llama2.c v0 (legacy fp32)";
    case ModelFormat::kLlama2cV1: return "llama2.c v1 (fp32)";
    case ModelFormat::kLlama2cV2: return "llama2.c v2 (q80)";
    case ModelFormat::kGguf: return "GGUF v3";
  }
  return "?";
}

std::uint64_t extent(const ModelConfig& c, Extent e) {
  switch (e) {
    case Extent::kOne: return 1;
    case Extent::kDim: return static_cast<std::uint64_t>(c.dim);
    case Extent::kHiddenDim: return static_cast<std::uint64_t>(c.hidden_dim);
    case Extent::kKvDim: return static_cast<std::uint64_t>(c.kv_dim());
    case Extent::kVocab: return static_cast<std::uint64_t>(c.vocab_size);
    case Extent::kSeqLen: return static_cast<std::uint64_t>(c.seq_len);
    case Extent::kHalfHead: return static_cast<std::uint64_t>(c.head_size() / 2);
    case Extent::kPerLayerDim: return static_cast<std::uint64_t>(c.per_layer_dim);
    case Extent::kAllLayersPerLayerDim:  // both ints: the product fits 64 bits
      return static_cast<std::uint64_t>(c.n_layers) * static_cast<std::uint64_t>(c.per_layer_dim);
  }
  return 0;
}

const char* extent_name(Extent e) {
  switch (e) {
    case Extent::kOne: return "1";
    case Extent::kDim: return "dim";
    case Extent::kHiddenDim: return "hidden_dim";
    case Extent::kKvDim: return "kv_dim";
    case Extent::kVocab: return "vocab_size";
    case Extent::kSeqLen: return "seq_len";
    case Extent::kHalfHead: return "head_size / 2";
    case Extent::kPerLayerDim: return "per_layer_dim";
    case Extent::kAllLayersPerLayerDim: return "n_layers x per_layer_dim";
  }
  return "?";
}

void role_shape(const ModelConfig& c, TensorRole role, std::uint64_t* rows, std::uint64_t* cols) {
  *rows = extent(c, role_info(role).rows);
  *cols = extent(c, role_info(role).cols);
}

bool ModelSpec::add_role(TensorRole role, TensorType type, int group, std::uint64_t rows, std::uint64_t cols,
                         std::uint64_t offset, std::uint64_t* end) {
  return add_role_strided(role, type, group, rows, cols, offset, 0, end);
}

bool ModelSpec::add_role_strided(TensorRole role, TensorType type, int group, std::uint64_t rows, std::uint64_t cols,
                                 std::uint64_t offset, std::uint64_t stride, std::uint64_t* end) {
  if (order_count_ >= kTensorRoleCount || roles_[static_cast<int>(role)].present) return false;
  RoleEntry e;
  e.present = true;
  e.type = type;
  e.group = group;
  e.rows = rows;
  e.cols = cols;
  e.base = offset;
  std::uint64_t numel = 0, total = 0;
  const std::uint64_t layers = is_per_layer(role) ? static_cast<std::uint64_t>(config.n_layers) : 1;
  if (layers == 0) return false;
  if (!checked_mul(rows, cols, &numel) || !type_bytes(type, numel, group, &e.value_bytes, &e.scale_bytes) ||
      !checked_add(e.value_bytes, e.scale_bytes, &e.stride))
    return false;
  if (stride != 0) {
    if (stride < e.stride) return false;
    e.stride = stride;
  }
  // The end of the last layer's tensor: (layers - 1) strides, then one tensor.
  if (!checked_mul(e.stride, layers - 1, &total) || !checked_add(total, e.value_bytes + e.scale_bytes, &total) ||
      !checked_add(offset, total, end))
    return false;
  roles_[static_cast<int>(role)] = e;
  order_[order_count_++] = role;
  return true;
}

void ModelSpec::reset() {
  format = ModelFormat::kLlama2cV0;
  architecture = "llama";
  config = ModelConfig{};
  shared_classifier = true;
  group_size = 0;
  header_bytes = 0;
  file_bytes = 0;
  tokenizer = EmbeddedTokenizer{};
  for (RoleEntry& e : roles_) e = RoleEntry{};
  order_count_ = 0;
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

TensorInfo ModelSpec::tensor(TensorRole role, int layer) const {
  const RoleEntry& e = roles_[static_cast<int>(role)];
  TensorInfo t;
  t.role = role;
  t.layer = is_per_layer(role) ? layer : -1;
  t.rows = e.rows;
  t.cols = e.cols;
  t.type = e.type;
  t.group = e.group;
  // Offsets were range-checked against the file size when the spec was read.
  t.offset = e.base + (t.layer < 0 ? 0 : static_cast<std::uint64_t>(t.layer) * e.stride);
  t.value_bytes = e.value_bytes;
  t.scale_bytes = e.scale_bytes;
  t.scales_offset = e.scale_bytes ? t.offset + e.value_bytes : 0;
  return t;
}

Status check_tensors_addressable(const char* name, const ModelSpec& spec, std::uint64_t max_bytes) {
  for (int i = 0; i < spec.tensor_count(); ++i) {
    const TensorInfo t = spec.tensor(i);
    if (t.bytes() <= max_bytes) continue;
    return Status::error(StatusCode::kOutOfMemory,
                         "%s: tensor %s is %llu bytes, more than this machine can address (%llu bytes at most)", name,
                         role_name(t.role), static_cast<unsigned long long>(t.bytes()),
                         static_cast<unsigned long long>(max_bytes));
  }
  return Status();
}

}  // namespace pocketlm
