#include "pocketlm/quant/tensor_type.h"

#include <cstring>

#include "pocketlm/base/checked.h"
#include "pocketlm/quant/q80.h"
#include "pocketlm/quant/q80_interleave.h"
#include "pocketlm/quant/row_interleave.h"

namespace pocketlm {

namespace {

// f32: values are used as they are.
void f32_dequantize(const void* values, const float*, int n, int, float* out) {
  std::memcpy(out, values, static_cast<std::size_t>(n) * sizeof(float));
}
void f32_interleave(void* dst, float*, const void* src, const float*, std::size_t n, std::size_t, std::size_t il) {
  interleave_block(static_cast<float*>(dst), static_cast<const float*>(src), n, il);
}
void f32_row(const void* values, const float*, std::size_t r, std::size_t n, std::size_t d, std::size_t,
             std::size_t il, float* out) {
  copy_interleaved_row(static_cast<const float*>(values), r, n, d, il, out);
}

// q80: int8 values and a separate fp32 scale stream (quant/q80.h).
void q80_dequantize(const void* values, const float* scales, int n, int group, float* out) {
  dequantize_q80(static_cast<const std::int8_t*>(values), scales, n, group, out);
}
void q80_quantize(const float* x, int n, int group, void* values, float* scales) {
  quantize_q80_activations(x, n, group, static_cast<std::int8_t*>(values), scales);
}
void q80_interleave(void* dst, float* dst_scales, const void* src, const float* src_scales, std::size_t n,
                    std::size_t group, std::size_t il) {
  interleave_q80_block(static_cast<std::int8_t*>(dst), dst_scales, static_cast<const std::int8_t*>(src), src_scales,
                       n, group, il);
}
void q80_row(const void* values, const float* scales, std::size_t r, std::size_t n, std::size_t d,
             std::size_t group, std::size_t il, float* out) {
  dequantize_interleaved_q80_row(static_cast<const std::int8_t*>(values), scales, r, n, d, group, il, out);
}

const TypeTraits kTraits[kTensorTypeCount] = {
    {"f32", 1, 32, 0, 0, true, TensorType::kF32, f32_dequantize, nullptr, f32_interleave, f32_row},
    {"q80", 0, 8, 0, 4, false, TensorType::kQ80, q80_dequantize, q80_quantize, q80_interleave, q80_row},
};

}  // namespace

const TypeTraits& type_traits(TensorType type) { return kTraits[type_index(type)]; }

bool type_bytes(TensorType type, std::uint64_t numel, int group, std::uint64_t* value_bytes,
                std::uint64_t* scale_bytes) {
  const TypeTraits& t = type_traits(type);
  const int block = block_elements(type, group);
  if (block <= 0 || numel % static_cast<std::uint64_t>(block) != 0) return false;
  const std::uint64_t blocks = numel / static_cast<std::uint64_t>(block);
  const std::uint64_t block_bytes =
      static_cast<std::uint64_t>(block) * static_cast<std::uint64_t>(t.value_bits) / 8 +
      static_cast<std::uint64_t>(t.inline_scale_bytes);
  return checked_mul(blocks, block_bytes, value_bytes) &&
         checked_mul(blocks, static_cast<std::uint64_t>(t.stream_scale_bytes), scale_bytes);
}

namespace {

// NaN and infinity are the floats whose exponent bits are all ones; a bit test is immune to
// compiler flags that assume finite math.
bool non_finite(const float* v, std::size_t n, std::size_t* at) {
  for (std::size_t i = 0; i < n; ++i) {
    std::uint32_t bits;
    std::memcpy(&bits, v + i, sizeof bits);
    if ((bits & 0x7F800000u) == 0x7F800000u) {
      *at = i;
      return true;
    }
  }
  return false;
}

}  // namespace

bool find_non_finite(TensorType type, const void* values, const float* scales, std::size_t rows, std::size_t cols,
                     int group, NonFinite* found) {
  const TypeTraits& t = type_traits(type);
  std::size_t at = 0;
  if (t.float_values && non_finite(static_cast<const float*>(values), rows * cols, &at)) {
    *found = NonFinite{at, false, static_cast<const float*>(values)[at]};
    return true;
  }
  if (t.stream_scale_bytes == sizeof(float) && scales) {
    const auto block = static_cast<std::size_t>(block_elements(type, group));
    if (non_finite(scales, rows * cols / block, &at)) {
      *found = NonFinite{static_cast<std::uint64_t>(at) * block, true, scales[at]};
      return true;
    }
  }
  return false;
}

std::size_t row_value_bytes(TensorType type, std::size_t cols, int group) {
  const TypeTraits& t = type_traits(type);
  const auto block = static_cast<std::size_t>(block_elements(type, group));
  return cols / block * (block * static_cast<std::size_t>(t.value_bits) / 8 + static_cast<std::size_t>(t.inline_scale_bytes));
}

std::size_t row_scale_bytes(TensorType type, std::size_t cols, int group) {
  const auto block = static_cast<std::size_t>(block_elements(type, group));
  return cols / block * static_cast<std::size_t>(type_traits(type).stream_scale_bytes);
}

}  // namespace pocketlm
