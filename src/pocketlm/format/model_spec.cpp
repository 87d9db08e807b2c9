#include "pocketlm/format/model_spec.h"

#include "pocketlm/base/checked.h"
#include "pocketlm/base/format.h"
#include "pocketlm/base/status.h"
#include "pocketlm/format/architecture.h"

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
    default: break;
  }
  const int i = static_cast<int>(e) - static_cast<int>(Extent::kParam0);
  if (i < 0 || e >= Extent::kEnd) return 0;
  const auto param = static_cast<std::uint64_t>(c.kind_params[i % kMaxKindParams]);
  // Both ints: the product fits 64 bits.
  return i < kMaxKindParams ? param : static_cast<std::uint64_t>(c.n_layers) * param;
}

const char* extent_name(Extent e, const char* const* param_names, char* out, std::size_t cap) {
  static const char* const kShared[] = {"1", "dim", "hidden_dim", "kv_dim", "vocab_size", "seq_len", "head_size / 2"};
  static_assert(sizeof kShared / sizeof *kShared == static_cast<int>(Extent::kParam0));
  const int i = static_cast<int>(e) - static_cast<int>(Extent::kParam0);
  if (i < 0) {
    format_to(out, cap, "%s", kShared[static_cast<int>(e)]);
  } else {
    const int p = i % kMaxKindParams;
    char param[24];
    if (param_names && param_names[p])
      format_to(param, sizeof param, "%s", param_names[p]);
    else
      format_to(param, sizeof param, "kind_params[%d]", p);
    format_to(out, cap, "%s%s", i < kMaxKindParams ? "" : "n_layers x ", param);
  }
  return out;
}

void role_shape(const ModelConfig& c, const RoleInfo& row, std::uint64_t* rows, std::uint64_t* cols) {
  *rows = extent(c, row.rows);
  *cols = extent(c, row.cols);
}

const Architecture* ModelSpec::schema() const { return find_architecture(architecture); }

const RoleInfo& ModelSpec::role(TensorRole r) const {
  if (!is_kind_role(r)) return role_info(r);
  static constexpr RoleInfo kUnknown = {"?", nullptr, false, TensorUse::kUnused, Extent::kOne, Extent::kOne,
                                        region::kUnused};
  const Architecture* a = schema();
  return a && a->kind_roles[kind_role_index(r)].name ? a->kind_roles[kind_role_index(r)] : kUnknown;
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
  t.schema = &this->role(role);
  t.layer = is_per_layer(role) ? layer : -1;
  t.rows = e.rows;
  t.cols = e.cols;
  t.type = e.type;
  t.group = e.group;
  // Offsets were range-checked against the file size when the spec was read.
  t.offset = e.base + (t.layer < 0 ? 0 : static_cast<std::uint64_t>(t.layer) * e.stride);
  t.value_bytes = e.value_bytes;
  t.scale_bytes = e.scale_bytes;
  return t;
}

Status check_tensors_addressable(const char* name, const ModelSpec& spec, std::uint64_t max_bytes) {
  for (int i = 0; i < spec.tensor_count(); ++i) {
    const TensorInfo t = spec.tensor(i);
    if (t.bytes() <= max_bytes) continue;
    return Status::error(StatusCode::kOutOfMemory,
                         "%s: tensor %s is %llu bytes, more than this machine can address (%llu bytes at most)", name,
                         t.schema->name, static_cast<unsigned long long>(t.bytes()),
                         static_cast<unsigned long long>(max_bytes));
  }
  return Status();
}

}  // namespace pocketlm
