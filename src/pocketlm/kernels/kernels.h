// The kernel table: every hot loop of the forward pass behind one function pointer, so
// that a backend (reference, avx2, neon, tiled4, a PSP VFPU one) replaces them as a set.
// Shapes are in elements; matrices are row-major [d rows (out), n cols (in)].
#pragma once

#include <cstdint>

namespace pocketlm {

// Where one layer's attention reads and writes (see Kernels::attention).
struct AttentionArgs {
  float* out;                // [n_heads * head_size] weighted sum of values per head
  float* att;                // scratch [n_heads * att_stride] scores, then probabilities
  const float* q;            // [n_heads * head_size] rotated queries at `pos`
  const float* key_cache;    // this layer's keys [seq_len * kv_dim]
  const float* value_cache;  // this layer's values [seq_len * kv_dim]
  int pos;                   // attend over t = 0..pos
  int n_heads, n_kv_heads, head_size, kv_dim, att_stride;
  // Heads [head_begin, head_end) only (-1: through n_heads), so threads can split them.
  int head_begin = 0;
  int head_end = -1;
};

struct Kernels {
  const char* name;
  // Whether results are bit-identical to `reference` (and so to llama2.c).
  bool exact;
  // Row interleave of the fp32 weight matrices this backend reads (kernels/row_interleave.h);
  // 1 = row-major. Matrices are repacked at load time.
  int f32_interleave;
  // out[d] = W[d,n] · x[n], fp32, each row summed in index order; W in f32_interleave layout.
  void (*matmul_f32)(float* out, const float* x, const float* w, int n, int d);
  // out[d] = W · x with int8 groups (W in the q80_interleave layout): per group an int32 dot, then
  // acc += ((float)isum * w_scale) * x_scale, groups in order (runq.c's matmul). n is a
  // multiple of group_size (the format reader refuses other files), and xq is in [-127, 127].
  void (*matmul_q80)(float* out, const std::int8_t* xq, const float* xs, const std::int8_t* wq,
                     const float* ws, int n, int d, int group_size);
  // out[n] = w * (x / rms(x)), eps 1e-5 (run.c's rmsnorm). out may alias x.
  void (*rmsnorm)(float* out, const float* x, const float* w, int n);
  // In-place softmax over n values (subtract the max, expf, divide by the sum).
  void (*softmax)(float* x, int n);
  // Multi-head attention with grouped KV heads (kv head = h / (n_heads / n_kv_heads)).
  void (*attention)(const AttentionArgs& args);
  // SwiGLU: hb[i] = silu(hb[i]) * hb2[i].
  void (*swiglu)(float* hb, const float* hb2, int n);
  // Quantizes activations to q8_0 groups (see quant/q80.h).
  void (*quantize_q80)(const float* x, int n, int group_size, std::int8_t* q, float* s);
  // Row interleave of q8_0 weight matrices for a group size (kernels/q80_interleave.h);
  // nullptr = row-major for every group size. Matrices are repacked at load time.
  int (*q80_interleave)(int group_size) = nullptr;
};

// The q8_0 interleave `kernels` reads for `group_size` (1 = row-major).
inline int q80_interleave_of(const Kernels& kernels, int group_size) {
  return kernels.q80_interleave ? kernels.q80_interleave(group_size) : 1;
}

// The scalar backend that reproduces llama2.c's run.c/runq.c arithmetic bit for bit.
const Kernels& reference_kernels();

// Looks a backend up by name ("reference", ...). Returns nullptr when this build or this
// CPU does not have it.
const Kernels* find_kernels(const char* name);
// The fastest exact backend available on this CPU.
const Kernels& default_kernels();
// Names of every backend compiled into this build, for help texts.
const char* const* kernel_names();

}  // namespace pocketlm
