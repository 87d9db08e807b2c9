// The reference kernels by name, so that other backends can reuse the ones they do not
// replace (and fall back to them for shapes their SIMD paths do not cover).
#pragma once

#include <cstdint>

#include "pocketlm/kernels/kernels.h"

namespace pocketlm::reference {

void matmul_f32(float* out, const float* x, const float* w, int n, int d);
void matmul_q80(float* out, const std::int8_t* xq, const float* xs, const std::int8_t* wq, const float* ws, int n,
                int d, int group_size);
void rmsnorm(float* out, const float* x, const float* w, int n, float eps);
void softmax(float* x, int n);
// run.c's RoPE with powf/cosf/sinf on the fly: the oracle for model/rope_table.h, which the
// forward pass uses instead.
void rope(float* q, float* k, int dim, int kv_dim, int head_size, int pos);
void attention(const AttentionArgs& args);
void attention_f16(const AttentionArgs& args);
void swiglu(float* hb, const float* hb2, int n);

// The largest float x for which expf(x) is finite (ln(FLT_MAX) rounded down to a float);
// swiglu skips expf beyond it (tests/kernel_equivalence_test.cpp checks it against libm).
inline constexpr float kSiluExpLimit = 88.72283172607421875f;

}  // namespace pocketlm::reference
