#include "pocketlm/quant/tensor_type.h"

#include <cstring>

#include "pocketlm/base/checked.h"
#include "pocketlm/quant/block_interleave.h"
#include "pocketlm/quant/fp16.h"
#include "pocketlm/quant/iq4_xs.h"
#include "pocketlm/quant/q4_0.h"
#include "pocketlm/quant/q8_0.h"
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

// f16: halves, used with f32 activations.
void f16_dequantize(const void* values, const float*, int n, int, float* out) {
  const auto* h = static_cast<const std::uint16_t*>(values);
  for (int i = 0; i < n; ++i) out[i] = fp16_to_fp32(h[i]);
}
void f16_interleave(void* dst, float*, const void* src, const float*, std::size_t n, std::size_t, std::size_t il) {
  interleave_halves(static_cast<std::uint16_t*>(dst), static_cast<const std::uint16_t*>(src), n, il);
}
void f16_row(const void* values, const float*, std::size_t r, std::size_t n, std::size_t d, std::size_t,
             std::size_t il, float* out) {
  const auto* h = static_cast<const std::uint16_t*>(values);
  if (il == 1 || r >= d / il * il) {
    for (std::size_t j = 0; j < n; ++j) out[j] = fp16_to_fp32(h[r * n + j]);
    return;
  }
  const std::uint16_t* base = h + (r / il) * il * n + r % il;
  for (std::size_t j = 0; j < n; ++j) out[j] = fp16_to_fp32(base[j * il]);
}

// ggml blocks (Q8_0, Q4_0): one block dequantizer, laid out row-major or interleaved.
template <std::size_t kBlockBytes, void (*Dequantize)(const void*, std::size_t, float*)>
void ggml_dequantize(const void* values, const float*, int n, int, float* out) {
  Dequantize(values, static_cast<std::size_t>(n), out);
}
template <std::size_t kBlockBytes>
void ggml_interleave(void* dst, float*, const void* src, const float*, std::size_t n, std::size_t, std::size_t il) {
  interleave_ggml_blocks(static_cast<unsigned char*>(dst), static_cast<const unsigned char*>(src), n, kBlockBytes, il);
}
template <std::size_t kBlockBytes, void (*Dequantize)(const void*, std::size_t, float*)>
void ggml_row(const void* values, const float*, std::size_t r, std::size_t n, std::size_t d, std::size_t,
              std::size_t il, float* out) {
  unsigned char block[kBlockBytes];
  for (std::size_t g = 0; g < n / 32; ++g) {
    copy_ggml_block(static_cast<const unsigned char*>(values), r, g, n, d, kBlockBytes, il, block);
    Dequantize(block, 32, out + g * 32);
  }
}
// IQ4_XS: super-blocks interleaved by fields (quant/block_interleave.h, head2 = 2: d and the
// high scale bits), or row-major (il 1).
void iq4_xs_dequantize(const void* values, const float*, int n, int, float* out) {
  dequantize_iq4_xs(values, static_cast<std::size_t>(n), out);
}
void iq4_xs_interleave(void* dst, float*, const void* src, const float*, std::size_t n, std::size_t, std::size_t il) {
  interleave_block_fields(static_cast<unsigned char*>(dst), static_cast<const unsigned char*>(src), n / kIQ4_XSBlock,
                          kIQ4_XSBlockBytes, 2, il);
}
void iq4_xs_row(const void* values, const float*, std::size_t r, std::size_t n, std::size_t d, std::size_t,
                std::size_t il, float* out) {
  unsigned char block[kIQ4_XSBlockBytes];
  const std::size_t nb = n / kIQ4_XSBlock;
  for (std::size_t g = 0; g < nb; ++g) {
    copy_block_fields(static_cast<const unsigned char*>(values), r, g, nb, d, kIQ4_XSBlockBytes, 2, il, block);
    dequantize_iq4_xs(block, kIQ4_XSBlock, out + g * kIQ4_XSBlock);
  }
}
void q8_0_quantize(const float* x, int n, int, void* values, float*) {
  quantize_q8_0(x, static_cast<std::size_t>(n), values);
}
// Weights into GGUF tensor bytes: f32 as it is, f16 rounded to nearest even (quant/fp16.h).
void f32_weights(const float* x, std::size_t n, void* out) { std::memcpy(out, x, n * sizeof(float)); }
void f16_weights(const float* x, std::size_t n, void* out) {
  auto* h = static_cast<unsigned char*>(out);
  for (std::size_t i = 0; i < n; ++i) store_fp16(h + 2 * i, fp32_to_fp16(x[i]));
}

// ggml's type ids and llama.cpp's file types (ggml.h's ggml_type, llama.h's llama_ftype).
constexpr int kNoGgml = -1;

const TypeTraits kTraits[kTensorTypeCount] = {
    {"f32", 1, 32, 0, 0, 32, TensorType::kF32, 0, 0, f32_dequantize, nullptr, f32_interleave, f32_row, f32_weights},
    {"q80", 0, 8, 0, 4, 0, TensorType::kQ80, kNoGgml, kNoGgml, q80_dequantize, q80_quantize, q80_interleave, q80_row,
     nullptr},
    {"f16", 1, 16, 0, 0, 16, TensorType::kF32, 1, 1, f16_dequantize, nullptr, f16_interleave, f16_row, f16_weights},
    {"q8_0", 32, 8, 2, 0, 0, TensorType::kQ8_0, 8, 7, ggml_dequantize<kQ8_0BlockBytes, dequantize_q8_0>,
     q8_0_quantize, ggml_interleave<kQ8_0BlockBytes>, ggml_row<kQ8_0BlockBytes, dequantize_q8_0>, quantize_q8_0},
    {"q4_0", 32, 4, 2, 0, 0, TensorType::kQ8_0, 2, 2, ggml_dequantize<kQ4_0BlockBytes, dequantize_q4_0>, nullptr,
     ggml_interleave<kQ4_0BlockBytes>, ggml_row<kQ4_0BlockBytes, dequantize_q4_0>, quantize_q4_0},
    {"iq4_xs", kIQ4_XSBlock, 4, kIQ4_XSScaleBytes, 0, 0, TensorType::kQ8_0, 23, 30, iq4_xs_dequantize, nullptr,
     iq4_xs_interleave, iq4_xs_row, quantize_iq4_xs},
};

}  // namespace

const TypeTraits& type_traits(TensorType type) { return kTraits[type_index(type)]; }

bool type_from_ggml(std::uint32_t ggml_type, TensorType* type) {
  for (int i = 0; i < kTensorTypeCount; ++i) {
    if (kTraits[i].ggml_type >= 0 && static_cast<std::uint32_t>(kTraits[i].ggml_type) == ggml_type) {
      *type = static_cast<TensorType>(i);
      return true;
    }
  }
  return false;
}

bool type_from_name(const char* name, TensorType* type) {
  for (int i = 0; i < kTensorTypeCount; ++i) {
    if (std::strcmp(kTraits[i].name, name) == 0) {
      *type = static_cast<TensorType>(i);
      return true;
    }
  }
  return false;
}

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

// The same for n halves at offset + i * stride bytes (all exponent bits set: inf or NaN).
bool non_finite_half(const void* base, std::size_t n, std::size_t offset, std::size_t stride, std::size_t* at) {
  const auto* p = static_cast<const unsigned char*>(base) + offset;
  for (std::size_t i = 0; i < n; ++i, p += stride) {
    if ((load_fp16(p) & 0x7C00u) == 0x7C00u) {
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
  if (t.float_value_bits == 32 && non_finite(static_cast<const float*>(values), rows * cols, &at)) {
    *found = NonFinite{at, false, static_cast<const float*>(values)[at]};
    return true;
  }
  if (t.float_value_bits == 16 && non_finite_half(values, rows * cols, 0, 2, &at)) {
    *found = NonFinite{at, false, fp16_to_fp32(load_fp16(static_cast<const unsigned char*>(values) + 2 * at))};
    return true;
  }
  if (t.inline_scale_bytes >= 2) {  // ggml blocks: an fp16 scale starts each block
    const auto block = static_cast<std::size_t>(block_elements(type, group));
    const std::size_t block_bytes =
        block * static_cast<std::size_t>(t.value_bits) / 8 + static_cast<std::size_t>(t.inline_scale_bytes);
    if (non_finite_half(values, rows * cols / block, 0, block_bytes, &at)) {
      const unsigned char* p = static_cast<const unsigned char*>(values) + at * block_bytes;
      *found = NonFinite{static_cast<std::uint64_t>(at) * block, true, fp16_to_fp32(load_fp16(p))};
      return true;
    }
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
