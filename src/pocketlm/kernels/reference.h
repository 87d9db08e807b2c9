// The reference kernels by name, so that other backends can reuse the ones they do not
// replace (and fall back to them for shapes their SIMD paths do not cover).
#pragma once

#include <cstdint>

#include "pocketlm/kernels/kernels.h"

namespace pocketlm::reference {

void matmul_f32(float* out, const float* x, const float* w, int n, int d);
void matmul_q80(float* out, const std::int8_t* xq, const float* xs, const std::int8_t* wq, const float* ws, int n,
                int d, int group_size);
// GGUF types, row-major weights (interleave 1). The arithmetic each backend must reproduce:
// - f16:  out[i] = sum over j in index order of fp16_to_fp32(w[i][j]) * x[j] (f32 activations,
//         a separate multiply and add, as matmul_f32).
// - q8_0 and q4_0 (activations quantized to Q8_0 blocks, quant/q8_0.h): per row, acc = 0.0f;
//   for each block b in order: isum = the exact int32 sum of the 32 products q_w * q_x (q_w the
//   weight's int8, or its nibble - 8 for q4_0); acc = acc + (float)isum * (d_w * d_x), with d_w
//   and d_x the blocks' fp16 scales as floats (d_w * d_x rounded first). out[i] = acc.
// - iq4_xs (quant/iq4_xs.h; Q8_0 activations, block b of the activation pairs with sub-block
//   b % 8 of super-block b / 8): per row, acc = 0.0f; for each super-block in order, with d_w
//   its fp16 d as a float, and each of its 8 sub-blocks in order: isum = the exact int32 sum of
//   the 32 products kIQ4NLValues[nibble] * q_x; dl = d_w * (float)(ls - 32) (rounded: the
//   dequantizer's dl); acc = acc + (float)isum * (dl * d_x) (dl * d_x rounded first).
void matmul_f16(float* out, const Matrix& w, const Activation& x, int rows);
void matmul_q8_0(float* out, const Matrix& w, const Activation& x, int rows);
void matmul_q4_0(float* out, const Matrix& w, const Activation& x, int rows);
void matmul_iq4_xs(float* out, const Matrix& w, const Activation& x, int rows);
// Rows [full, rows) of a Q4_0 (kQ4) or Q8_0 matrix: the row-major tail after a SIMD backend's
// interleaved blocks, computed by the loops above.
template <bool kQ4>
void matmul_ggml_tail(float* out, const Matrix& w, const Activation& x, int full, int rows) {
  if (full >= rows) return;
  if constexpr (kQ4)
    matmul_q4_0(out + full, rows_from(w, full), x, rows - full);
  else
    matmul_q8_0(out + full, rows_from(w, full), x, rows - full);
}
// Rows [full, rows) of a q80 matrix (llama2.c's runq.c format): the row-major tail after a
// backend's interleaved blocks, computed by matmul_q80 above.
inline void matmul_q80_tail(float* out, const Matrix& w, const Activation& x, int full, int rows) {
  if (full >= rows) return;
  const Matrix t = rows_from(w, full);
  matmul_q80(out + full, static_cast<const std::int8_t*>(x.values), x.scales, static_cast<const std::int8_t*>(t.values),
             t.scales, w.cols, rows - full, w.group);
}
// Activations to Q8_0 blocks (quant/q8_0.h's rule), as the kernel table calls it.
void quantize_q8_0_act(const float* x, int n, int group, void* values, float* scales);
void rmsnorm(float* out, const float* x, const float* w, int n, float eps);
void softmax(float* x, int n);
// run.c's softmax with its middle loop (x - max, expf, the running sum) as `exp_sum`, a kernel
// table's slot: the max in index order, exp_sum, then the division. softmax() is it over
// exp_sum() below; a backend passes its own.
void softmax_over(float* x, int n, ExpSumFn exp_sum);
// x[i] = std::exp(x[i]) (the C library's expf) for i < n, in order: the kernel table's exp.
void exp(float* x, int n);
// run.c's softmax loop: x[i] = std::exp(x[i] - max); sum += x[i]. The table's exp_sum.
float exp_sum(float* x, int n, float max);
// The kernel table's compact_at_least: a branch-free loop (a branch on the compare would
// mispredict constantly on a peaked distribution).
int compact_at_least(const float* x, int n, float threshold, std::uint32_t* out);
// run.c's RoPE with powf/cosf/sinf on the fly: the oracle for model/rope_table.h, which the
// forward pass uses instead.
void rope(float* q, float* k, int dim, int kv_dim, int head_size, int pos);
void attention(const AttentionArgs& args);
void attention_f16(const AttentionArgs& args);
void swiglu(float* hb, const float* hb2, int n);
void gelu_gate(float* g, const float* m, int n);

// The largest float x for which expf(x) is finite (ln(FLT_MAX) rounded down to a float);
// swiglu skips expf beyond it (tests/kernel_equivalence_test.cpp checks it against libm).
inline constexpr float kSiluExpLimit = 88.72283172607421875f;

}  // namespace pocketlm::reference
