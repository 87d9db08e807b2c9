// RoPE (Su et al., "RoFormer", 2021) with its angles precomputed. llama2.c evaluates
// powf/cosf/sinf for every pair of every layer at every token; the values depend only on
// (pos, i % head_size), so they are computed once per session with the very same float
// expressions and read back — bit for bit what run.c computes, without ~2,600 libm calls
// per token for a stories15M shape.
#pragma once

namespace pocketlm {

// Fills cos_table/sin_table [seq_len * head_size / 2]: entry pos * (head_size / 2) + i / 2
// holds cosf/sinf(pos * 1 / powf(theta, i / head_size)) for even i < head_size (theta = 10000
// in run.c).
void fill_rope_table(int seq_len, int head_size, float theta, float* cos_table, float* sin_table);

// Rotates (q[i], q[i+1]) for even i < dim, and (k[i], k[i+1]) for i < kv_dim, by the angles
// of one position (the rows cos_row/sin_row of the table), as run.c's RoPE loop does.
void apply_rope(float* q, float* k, int dim, int kv_dim, int head_size, const float* cos_row, const float* sin_row);

}  // namespace pocketlm
