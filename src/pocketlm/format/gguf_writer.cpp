#include "pocketlm/format/gguf_writer.h"

#include <cstring>

#include "pocketlm/base/checked.h"
#include "pocketlm/quant/tensor_type.h"

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "GGUF fields are written as little-endian values");

namespace pocketlm {

using namespace gguf;

bool GgufWriter::tensor_bytes(std::uint32_t ggml_type, std::uint64_t rows, std::uint64_t cols, std::uint64_t* bytes) {
  TensorType type;
  if (!type_from_ggml(ggml_type, &type)) return false;
  std::uint64_t numel = 0, scales = 0;
  if (cols % static_cast<std::uint64_t>(block_elements(type, 0)) != 0) return false;
  return checked_mul(rows, cols, &numel) && type_bytes(type, numel, 0, bytes, &scales);
}

Status GgufWriter::misuse(const char* what) const {
  return Status::error(StatusCode::kInvalidArgument, "GGUF writer: %s", what);
}

Status GgufWriter::put(const void* data, std::size_t bytes) {
  POCKETLM_TRY(sink_.write(data, bytes));
  position_ += bytes;
  return Status();
}

Status GgufWriter::put_string(const void* bytes, std::uint64_t len) {
  POCKETLM_TRY(put(&len, 8));
  return len ? put(bytes, static_cast<std::size_t>(len)) : Status();
}

Status GgufWriter::begin(std::uint64_t tensor_count, std::uint64_t kv_count, std::uint32_t alignment) {
  if (begun_) return misuse("begin() called twice");
  if (alignment == 0 || (alignment & (alignment - 1)) != 0) return misuse("alignment must be a power of two");
  begun_ = true;
  tensors_declared_ = tensor_count;
  kv_declared_ = kv_count;
  alignment_ = alignment;
  const std::uint32_t head[2] = {kMagic, kVersion};
  POCKETLM_TRY(put(head, sizeof head));
  POCKETLM_TRY(put(&tensor_count, 8));
  return put(&kv_count, 8);
}

Status GgufWriter::key(const char* name, ValueType type) {
  if (!begun_ || array_left_ != 0 || tensors_described_ != 0) return misuse("metadata out of order");
  if (kv_written_ >= kv_declared_) return misuse("more metadata pairs than declared");
  ++kv_written_;
  POCKETLM_TRY(put_string(name, std::strlen(name)));
  const auto t = static_cast<std::uint32_t>(type);
  return put(&t, 4);
}

Status GgufWriter::kv_string(const char* k, const char* value) {
  POCKETLM_TRY(key(k, kString));
  return put_string(value, std::strlen(value));
}

Status GgufWriter::kv_u32(const char* k, std::uint32_t value) {
  POCKETLM_TRY(key(k, kUint32));
  return put(&value, 4);
}

Status GgufWriter::kv_f32(const char* k, float value) {
  POCKETLM_TRY(key(k, kFloat32));
  return put(&value, 4);
}

Status GgufWriter::kv_bool(const char* k, bool value) {
  POCKETLM_TRY(key(k, kBool));
  const unsigned char b = value ? 1 : 0;
  return put(&b, 1);
}

Status GgufWriter::kv_array(const char* k, ValueType element_type, std::uint64_t count) {
  if (element_type == kArray) return misuse("arrays of arrays are not written");
  POCKETLM_TRY(key(k, kArray));
  const auto t = static_cast<std::uint32_t>(element_type);
  POCKETLM_TRY(put(&t, 4));
  POCKETLM_TRY(put(&count, 8));
  array_left_ = count;
  array_type_ = element_type;
  return Status();
}

Status GgufWriter::array_string(const void* bytes, std::uint64_t len) {
  if (array_left_ == 0 || array_type_ != kString) return misuse("no open string array");
  --array_left_;
  return put_string(bytes, len);
}

Status GgufWriter::array_f32(const float* values, std::size_t n) {
  if (array_type_ != kFloat32 || n > array_left_) return misuse("no open f32 array with room for these values");
  array_left_ -= n;
  return put(values, n * 4);
}

Status GgufWriter::array_i32(const std::int32_t* values, std::size_t n) {
  if (array_type_ != kInt32 || n > array_left_) return misuse("no open i32 array with room for these values");
  array_left_ -= n;
  return put(values, n * 4);
}

Status GgufWriter::tensor_info(const char* name, std::uint64_t rows, std::uint64_t cols, std::uint32_t ggml_type,
                               std::uint64_t* bytes_out) {
  if (!begun_ || array_left_ != 0 || kv_written_ != kv_declared_) return misuse("tensor info before the metadata");
  if (tensors_described_ >= tensors_declared_) return misuse("more tensor infos than declared");
  std::uint64_t bytes = 0, next = 0;
  if (!tensor_bytes(ggml_type, rows, cols, &bytes) || !checked_align_up(bytes, alignment_, &next) ||
      !checked_add(data_offset_, next, &next))
    return Status::error(StatusCode::kInvalidArgument, "GGUF writer: tensor %s [%llu, %llu] of type %s cannot be written",
                         name, static_cast<unsigned long long>(rows), static_cast<unsigned long long>(cols),
                         ggml_type_name(ggml_type));
  ++tensors_described_;
  POCKETLM_TRY(put_string(name, std::strlen(name)));
  const std::uint32_t n_dims = rows == 1 ? 1 : 2;
  POCKETLM_TRY(put(&n_dims, 4));
  POCKETLM_TRY(put(&cols, 8));
  if (n_dims == 2) POCKETLM_TRY(put(&rows, 8));
  POCKETLM_TRY(put(&ggml_type, 4));
  POCKETLM_TRY(put(&data_offset_, 8));
  data_offset_ = next;
  if (bytes_out) *bytes_out = bytes;
  return Status();
}

Status GgufWriter::pad() {
  static const unsigned char kZeros[64] = {};
  std::uint64_t target = 0;
  if (!checked_align_up(position_, alignment_, &target)) return misuse("file too large");
  std::uint64_t n = target - position_;
  while (n > 0) {
    const std::size_t k = n < sizeof kZeros ? static_cast<std::size_t>(n) : sizeof kZeros;
    POCKETLM_TRY(put(kZeros, k));
    n -= k;
  }
  return Status();
}

Status GgufWriter::begin_tensor(std::uint64_t bytes) {
  if (tensors_described_ != tensors_declared_) return misuse("tensor data before every tensor info");
  if (tensor_left_ != 0) return misuse("the previous tensor is incomplete");
  if (tensors_started_ >= tensors_declared_) return misuse("more tensors than declared");
  // The data section and every tensor start on the alignment (offsets were assigned so).
  const std::uint64_t before = position_;
  POCKETLM_TRY(pad());
  if (tensors_started_ > 0) data_written_ += position_ - before;
  ++tensors_started_;
  tensor_left_ = bytes;
  return Status();
}

Status GgufWriter::tensor_data(const void* data, std::size_t bytes) {
  if (bytes > tensor_left_) return misuse("more tensor data than the tensor holds");
  tensor_left_ -= bytes;
  data_written_ += bytes;
  return put(data, bytes);
}

Status GgufWriter::finish() {
  if (tensors_started_ != tensors_declared_ || kv_written_ != kv_declared_ || array_left_ != 0 || tensor_left_ != 0)
    return misuse("finished before every declared pair, tensor and byte was written");
  const std::uint64_t before = position_;
  POCKETLM_TRY(pad());
  if (tensors_started_ > 0) data_written_ += position_ - before;
  if (data_written_ != data_offset_)
    return Status::error(StatusCode::kInvalidArgument,
                         "GGUF writer: %llu bytes of tensor data were written but the tensor infos describe %llu",
                         static_cast<unsigned long long>(data_written_), static_cast<unsigned long long>(data_offset_));
  return Status();
}

}  // namespace pocketlm
