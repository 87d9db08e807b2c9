// Tensor types as data (the ggml habit): one row per type says how its values are laid out
// in bytes, which activation type a matmul over it pairs with, and how to convert rows. The
// forward pass never switches on a type: it asks this table and the kernel table
// (kernels/kernels.h, indexed by type). A new type is one enum value, one row in
// tensor_type.cpp, and its reference kernels.
#pragma once

#include <cstddef>
#include <cstdint>

namespace pocketlm {

enum class TensorType : std::uint8_t {
  kF32 = 0,  // IEEE binary32
  kQ80,      // llama2.c's q80 (runq.c): int8 values, then one fp32 scale per group in a separate
             // stream; the group size is file-wide (the v2 header's group_size)
  kF16,      // IEEE binary16 (GGUF F16); matmuls read f32 activations
  kQ8_0,     // ggml Q8_0: blocks of 32 = fp16 scale + 32 int8 (quant/q8_0.h); also the activation
             // type of Q8_0 and Q4_0 matmuls
  kQ4_0,     // ggml Q4_0: blocks of 32 = fp16 scale + 16 bytes of nibbles (quant/q4_0.h)
  kIQ4_XS,   // ggml IQ4_XS: super-blocks of 256 = fp16 d, 6-bit sub-block scales, nibbles indexing a
             // non-linear grid (quant/iq4_xs.h); Q8_0 activations
  kCount
};
inline constexpr int kTensorTypeCount = static_cast<int>(TensorType::kCount);
inline constexpr int type_index(TensorType t) { return static_cast<int>(t); }

struct TypeTraits {
  const char* name;     // "f32", "q80": as inspect and plan print it
  int block;            // elements per block; 0 = the tensor's own group size (llama2.c q80)
  int value_bits;       // bits per element in the value stream
  int inline_scale_bytes;  // bytes of scales at the start of each block (ggml types: the fp16 d first,
                           // then IQ4_XS's sub-block scales), else 0
  int stream_scale_bytes;  // bytes of scale per block in a separate stream (q80: one fp32)
  int float_value_bits;    // 32 or 16: the values are IEEE floats of that width (checked for NaN/inf at
                           // load); 0: integers
  TensorType activation;   // what a matmul over this type quantizes its input vector to
  int ggml_type;           // ggml's id of this type in a GGUF tensor info; -1: none (llama2.c's q80)
  int gguf_file_type;      // general.file_type of a GGUF file mostly of this type (llama.cpp's
                           // LLAMA_FTYPE_*: ALL_F32, MOSTLY_F16, ...); -1: none
  // Dequantizes n elements that start on a block boundary: out[i] = value i (run.c/runq.c's
  // dequantize for q80). `scales` is the separate scale stream (null when there is none).
  void (*dequantize)(const void* values, const float* scales, int n, int group, float* out);
  // Quantizes n floats (n a multiple of the block) the way activations are quantized before a
  // matmul (runq.c's quantize() for q80); null for f32, whose activations are used as they are.
  void (*quantize)(const float* x, int n, int group, void* values, float* scales);
  // Rearranges il row-major rows (n elements each) into one interleaved block of il rows, the
  // load-time repack for SIMD backends (quant/row_interleave.h, quant/q80_interleave.h).
  void (*interleave_rows)(void* dst, float* dst_scales, const void* src, const float* src_scales, std::size_t n,
                          std::size_t group, std::size_t il);
  // Dequantizes row r of a [d, n] matrix stored with row interleave il into out[n].
  void (*dequantize_row)(const void* values, const float* scales, std::size_t r, std::size_t n, std::size_t d,
                         std::size_t group, std::size_t il, float* out);
  // A GGUF tensor's bytes from n floats (n a multiple of the block), as ggml quantizes weights
  // (convert --type); null for a type GGUF has not (ggml_type -1).
  void (*quantize_weights)(const float* x, std::size_t n, void* out);
};

const TypeTraits& type_traits(TensorType type);
inline const char* type_name(TensorType type) { return type_traits(type).name; }
// The type whose row has this ggml id (a GGUF tensor info's type); false for any other id.
bool type_from_ggml(std::uint32_t ggml_type, TensorType* type);
// The type named `name` ("q4_0", as type_name gives it); false for any other name.
bool type_from_name(const char* name, TensorType* type);

// Elements per block of `type` for a tensor with group size `group`.
inline int block_elements(TensorType type, int group) {
  const int b = type_traits(type).block;
  return b ? b : group;
}

// Byte sizes of `numel` elements of `type` (numel a multiple of the block): the value stream
// and the separate scale stream. false when a size overflows 64 bits or the group is invalid.
bool type_bytes(TensorType type, std::uint64_t numel, int group, std::uint64_t* value_bytes,
                std::uint64_t* scale_bytes);

// Bytes of one row of `cols` elements (a whole number of blocks) in each stream.
std::size_t row_value_bytes(TensorType type, std::size_t cols, int group);
std::size_t row_scale_bytes(TensorType type, std::size_t cols, int group);

// A NaN or infinity found in a tensor's floats (values or scales).
struct NonFinite {
  std::uint64_t element;  // row-major index of the value (for a scale: of its block's first value)
  bool in_scales;         // the float was a block scale
  float value;
};

// Looks for the first non-finite float in `rows` row-major rows of `cols` elements: in the
// value stream when the type's values are floats, and in the separate scale stream. Indices
// count from the first of these rows. Returns false when every float is finite.
bool find_non_finite(TensorType type, const void* values, const float* scales, std::size_t rows, std::size_t cols,
                     int group, NonFinite* found);

}  // namespace pocketlm
