// The kernel table: every hot loop of the forward pass behind one function pointer, so that a
// backend (reference, avx2, neon, tiled4, a PSP VFPU one) replaces them as a set. Matmul,
// activation quantization and weight layout are indexed by tensor type (quant/tensor_type.h):
// a new type adds a slot, not a field. Backends start from the reference table and override
// what they accelerate (kernels/registry.cpp checks that a model's types are all covered).
// Shapes are in elements; matrices are row-major [rows (out), cols (in)] unless interleaved.
#pragma once

#include <cstddef>
#include <cstdint>

#include "pocketlm/base/status.h"
#include "pocketlm/quant/matrix.h"

namespace pocketlm {

// Where one layer's attention reads and writes (see Kernels::attention).
struct AttentionArgs {
  float* out;                // [n_heads * head_size] weighted sum of values per head
  float* att;                // scratch [n_heads * att_stride] scores, then probabilities
                             // (attention_batch: [n_heads * kAttentionQueryTile * att_stride])
  const float* q;            // [n_heads * head_size] rotated queries at `pos`
  const float* key_cache;    // this layer's keys [seq_len * kv_dim]
  const float* value_cache;  // this layer's values [seq_len * kv_dim]
  int pos;                   // attend over t = 0..pos
  int n_heads, n_kv_heads, head_size, kv_dim, att_stride;
  // Heads [head_begin, head_end) only (-1: through n_heads), so threads can split them.
  int head_begin = 0;
  int head_end = -1;
  // An f16 KV cache (--kv f16): these instead of key_cache/value_cache (attention_f16).
  const std::uint16_t* key_cache16 = nullptr;
  const std::uint16_t* value_cache16 = nullptr;
  // attention_batch only: `count` queries at positions pos .. pos + count - 1, causal (token i
  // attends over 0 .. pos + i); token i's q and out rows start q_stride floats after token
  // i - 1's.
  int count = 1;
  int q_stride = 0;
};

// Queries of one block that attention_batch scores against each key tile together: the
// scratch holds this many rows of scores per head.
inline constexpr int kAttentionQueryTile = 4;

// A matmul's input vector in the activation type of the weights (TypeTraits::activation):
// f32 values, or q80 int8 values with one fp32 scale per `group` (quantized once per vector).
struct Activation {
  const void* values;
  const float* scales;  // null for f32
  int n;
  int group;

  const float* f32() const { return static_cast<const float*>(values); }
};

// out[0..rows) = W[0..rows, :] · x, each row in the reference's summation order. W is a view
// (quant/matrix.h: rows_from) whose first row starts an interleaved block.
using MatmulFn = void (*)(float* out, const Matrix& w, const Activation& x, int rows);
// The input vectors of one batched matmul, one per token, each laid out as an Activation:
// token t's values start at values + t * value_stride bytes, its scales at
// scales + t * scale_stride floats.
struct ActivationBatch {
  const void* values;
  const float* scales;  // null for f32
  int n;
  int group;
  int count;                 // tokens
  std::size_t value_stride;  // bytes between tokens' values
  std::size_t scale_stride;  // floats between tokens' scales

  Activation at(int t) const {
    const auto i = static_cast<std::size_t>(t);
    return Activation{static_cast<const unsigned char*>(values) + i * value_stride,
                      scales ? scales + i * scale_stride : nullptr, n, group};
  }
};

// out[t * out_stride + r] = W[r, :] · x_t for tokens t < x.count and rows r < rows: count
// independent matmuls that share one read of W, each (token, row) dot product in exactly the
// order MatmulFn uses. W is a view as for MatmulFn.
using MatmulBatchFn = void (*)(float* out, std::size_t out_stride, const Matrix& w, const ActivationBatch& x,
                               int rows);
// Quantizes activations x[n] (n a multiple of group) to an activation type's values/scales.
using QuantizeFn = void (*)(const float* x, int n, int group, void* values, float* scales);
// x[i] = expf(x[i]) for i < n, in place (Kernels::exp).
using ExpFn = void (*)(float* x, int n);
// x[i] = expf(x[i] - max) for i < n, in place; returns their float sum (Kernels::exp_sum).
using ExpSumFn = float (*)(float* x, int n, float max);
// Writes the IEEE bits of every x[i] >= threshold (NaN never is), in index order, to
// out[0..count) and returns count; out must have room for n (lanes past count may be written).
using CompactFn = int (*)(const float* x, int n, float threshold, std::uint32_t* out);
// Rows per interleaved block this backend reads for a type at a group size (1 = row-major).
using InterleaveFn = int (*)(int group);

struct Kernels {
  // Every backend is bit-identical to `reference` (and so to llama2.c): the equivalence and
  // golden tests hold each to it, so there is no "inexact" flag to consult.
  const char* name;
  MatmulFn matmul[kTensorTypeCount];
  // Indexed by activation type; null for f32 (the vector is used as it is).
  QuantizeFn quantize_act[kTensorTypeCount];
  // Null = row-major for every group size. Matrices are repacked at load time.
  InterleaveFn interleave[kTensorTypeCount];
  // out[n] = w * (x / sqrt(mean(x^2) + eps)) (run.c's rmsnorm, eps 1e-5 there). out may alias x.
  void (*rmsnorm)(float* out, const float* x, const float* w, int n, float eps);
  // In-place softmax over n values (subtract the max, expf, divide by the sum).
  void (*softmax)(float* x, int n);
  // x[i] = expf(x[i]) for i < n, in place, bit for bit the C library's expf (run.c's softmax
  // calls it per value), for any float input (NaN, +-inf, subnormal). The reference calls
  // std::exp per value; avx2/avxvnni vectorize glibc's __expf_fma (kernels/x86_expf.h) when
  // the CPU has FMA and, checked once per process on a probe set, it gives this process's
  // expf bits; otherwise they keep the reference loop, so the slot is exact on any libm.
  ExpFn exp;
  // The middle of run.c's softmax, bit for bit: x[i] = expf(x[i] - max) (one float subtraction,
  // then the exp slot's expf) for i < n, in place, and their sum added in index order (the
  // additions rounded one at a time). Vector backends fuse it so that the chain of additions
  // overlaps the expf arithmetic.
  ExpSumFn exp_sum;
  // Top-p's candidate filter (sampling/topp.cpp): the probabilities >= its cutoff, as bits.
  CompactFn compact_at_least;
  // Multi-head attention with grouped KV heads (kv head = h / (n_heads / n_kv_heads)).
  void (*attention)(const AttentionArgs& args);
  // The same over an f16 KV cache (each value widened exactly to f32, then run.c's order).
  void (*attention_f16)(const AttentionArgs& args);
  // Batched prefill: the `count` queries of a block (AttentionArgs::count), each with the
  // arithmetic of `attention`, sharing the reads (and transposes) of the key tiles. Null =
  // `attention` once per token.
  void (*attention_batch)(const AttentionArgs& args);
  // SwiGLU: hb[i] = silu(hb[i]) * hb2[i].
  void (*swiglu)(float* hb, const float* hb2, int n);
  // A GELU-gated product (GeGLU's elementwise step, as swiglu is SwiGLU's): g[i] = gelu(g[i]) *
  // m[i], GELU in the engine's own float arithmetic (kernels/gelu.h), the same bits on every
  // target. A kernel slot, not a kind's code: an activation any kind may use, which a backend
  // may vectorize bit-identically like swiglu (kernels may not include a model kind's file).
  void (*gelu_gate)(float* g, const float* m, int n);
  // Batched matmul per weight type (kernels/batch.h); null = matmul_batch() tiles rows and runs
  // `matmul` per token over each tile.
  MatmulBatchFn matmul_batch[kTensorTypeCount];
};

// Rows per interleaved block `kernels` reads for `type` at `group` (1 = row-major).
inline int interleave_of(const Kernels& kernels, TensorType type, int group) {
  const InterleaveFn f = kernels.interleave[type_index(type)];
  return f ? f(group) : 1;
}

// Whether `kernels` can run a matmul over `type` (its matmul and, for a quantized activation
// type, its quantizer). Error (kUnsupported) names the backend, the tensor and the type.
Status check_kernels_cover(const Kernels& kernels, TensorType type, const char* tensor);

// The scalar backend that reproduces llama2.c's run.c/runq.c arithmetic bit for bit; every
// other backend is a copy of it with overrides.
const Kernels& reference_kernels();

// Looks a backend up by name ("reference", ...). Returns nullptr when this build or this
// CPU does not have it.
const Kernels* find_kernels(const char* name);
// The fastest exact backend available on this CPU.
const Kernels& default_kernels();
// Names of every backend compiled into this build, for help texts (null-terminated).
const char* const* kernel_names();

// One table a test can run: a backend, or a second table of one (avx512's vpmaddubsw matmuls on
// a CPU whose "avx512" is the vpdpbusd one), under a name unique among kernel_variants().
struct KernelVariant {
  const char* name;
  const Kernels* kernels;
};
// Every table this build has that this CPU can run, terminated by {nullptr, nullptr}. A
// backend's table is built from its own instructions (a static of its TU), so nothing outside
// that TU and this registry may name it: they reach it here, and only where the CPU has it.
const KernelVariant* kernel_variants();

// Adapters from a backend's raw loops to the table's signatures.
template <void (*F)(float* out, const float* x, const float* w, int n, int d)>
void matmul_f32_entry(float* out, const Matrix& w, const Activation& x, int rows) {
  F(out, x.f32(), w.f32(), w.cols, rows);
}
template <void (*F)(float* out, const std::int8_t* xq, const float* xs, const std::int8_t* wq, const float* ws, int n,
                    int d, int group_size)>
void matmul_q80_entry(float* out, const Matrix& w, const Activation& x, int rows) {
  F(out, static_cast<const std::int8_t*>(x.values), x.scales, static_cast<const std::int8_t*>(w.values), w.scales,
    w.cols, rows, w.group);
}
template <void (*F)(const float* x, int n, int group, std::int8_t* q, float* s)>
void quantize_q80_entry(const float* x, int n, int group, void* values, float* scales) {
  F(x, n, group, static_cast<std::int8_t*>(values), scales);
}
template <int kRows>
int fixed_interleave(int) {
  return kRows;
}

}  // namespace pocketlm
