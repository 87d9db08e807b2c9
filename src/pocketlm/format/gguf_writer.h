// GgufWriter: writes a GGUF v3 file front to back through a ByteSink, never holding more than
// the caller's current chunk: the header counts, metadata pairs (arrays element by element),
// tensor infos (offsets assigned in order, each aligned), then each tensor's data streamed in
// chunks with the alignment padding between. The caller declares the counts first (they are in
// the header) and writes tensor data in the order of the infos; the writer checks both.
#pragma once

#include <cstddef>
#include <cstdint>

#include "pocketlm/base/status.h"
#include "pocketlm/format/gguf.h"

namespace pocketlm {

// Where written bytes go (a file in the CLI, memory in tests). Errors name the destination.
class ByteSink {
 public:
  virtual ~ByteSink() = default;
  virtual Status write(const void* data, std::size_t bytes) = 0;
};

class GgufWriter {
 public:
  explicit GgufWriter(ByteSink& sink) : sink_(sink) {}

  Status begin(std::uint64_t tensor_count, std::uint64_t kv_count, std::uint32_t alignment = gguf::kDefaultAlignment);

  // Metadata pairs (each counts as one of kv_count).
  Status kv_string(const char* key, const char* value);
  Status kv_u32(const char* key, std::uint32_t value);
  Status kv_f32(const char* key, float value);
  Status kv_bool(const char* key, bool value);
  // An array pair: its header, then exactly `count` elements of `element_type`.
  Status kv_array(const char* key, gguf::ValueType element_type, std::uint64_t count);
  Status array_string(const void* bytes, std::uint64_t len);
  Status array_f32(const float* values, std::size_t n);
  Status array_i32(const std::int32_t* values, std::size_t n);

  // A tensor info: [rows, cols] (GGUF dims {cols, rows}; rows == 1 writes one dimension) of a
  // ggml type; its data offset is the next aligned position. Returns the data bytes in *bytes.
  Status tensor_info(const char* name, std::uint64_t rows, std::uint64_t cols, std::uint32_t ggml_type,
                     std::uint64_t* bytes = nullptr);
  // Starts the next tensor's data (padding to the alignment first); then exactly `bytes` bytes
  // (what tensor_info() returned for it) through tensor_data(), in any number of calls.
  Status begin_tensor(std::uint64_t bytes);
  Status tensor_data(const void* data, std::size_t bytes);
  // Pads the last tensor and checks that every declared pair, info and byte was written.
  Status finish();

  std::uint64_t bytes_written() const { return position_; }

  // Bytes of a [rows, cols] tensor of a ggml type pocketlm writes (F32, F16, Q8_0, Q4_0, IQ4_XS); false
  // for other types, a partial block or overflow.
  static bool tensor_bytes(std::uint32_t ggml_type, std::uint64_t rows, std::uint64_t cols, std::uint64_t* bytes);

 private:
  Status put(const void* data, std::size_t bytes);
  Status put_string(const void* bytes, std::uint64_t len);
  Status key(const char* name, gguf::ValueType type);
  Status pad();
  Status misuse(const char* what) const;

  ByteSink& sink_;
  std::uint64_t position_ = 0;
  std::uint32_t alignment_ = gguf::kDefaultAlignment;
  std::uint64_t tensors_declared_ = 0, kv_declared_ = 0;
  std::uint64_t tensors_described_ = 0, kv_written_ = 0;
  std::uint64_t array_left_ = 0;           // elements still due in the open array
  gguf::ValueType array_type_ = gguf::kUint8;
  std::uint64_t data_offset_ = 0;          // next tensor's offset in the data section (infos)
  std::uint64_t data_written_ = 0;         // bytes of the data section written (padding included)
  std::uint64_t tensors_started_ = 0;
  std::uint64_t tensor_left_ = 0;          // bytes still due for the current tensor
  bool begun_ = false;
};

}  // namespace pocketlm
