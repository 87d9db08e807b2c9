// The NEON backend (AArch64, where Advanced SIMD is always present), bit-identical to
// `reference`:
// - fp32 matmul: weights interleaved by 4 rows (kernels/row_interleave.h); each of the 4
//   lanes of a q-register is one output row and accumulates w*x in index order with a
//   separate multiply (vmulq) and add (vaddq). Never vfmaq/vmlaq: a fused multiply-add rounds
//   once and would change the result. The library is built with -ffp-contract=off, so the
//   compiler does not fuse them either.
// - q8_0 matmul: the int32 group sums are exact in any order, so they are computed with
//   widening byte multiplies (vmull_s8, |product| <= 2^14 fits int16) and pairwise widening
//   adds into int32 (vpadalq_s16); no dot-product extension needed. Then, 4 rows at a time,
//   each lane does runq.c's acc += ((float)isum * w_scale) * x_scale, groups in order.
// Ragged shapes (rows not a multiple of 4, group sizes not a multiple of 16) use the
// reference loops. Selected by default on AArch64 (kernels/registry.cpp).
#include <arm_neon.h>

#include <cstddef>

#include "pocketlm/kernels/reference.h"
#include "pocketlm/quant/q80.h"

namespace pocketlm {

namespace {

constexpr int kLanes = 4;

// One step of a lane-per-row accumulation: acc + w * x, rounded twice as run.c does.
inline float32x4_t mul_add(float32x4_t acc, float32x4_t w, float32x4_t x) {
  return vaddq_f32(acc, vmulq_f32(w, x));
}

// 4 blocks of 4 rows at once: four independent add chains hide the add latency.
void matmul_f32(float* out, const float* x, const float* w, int n, int d) {
  const int full = d / kLanes * kLanes;
  const std::size_t block = static_cast<std::size_t>(kLanes) * n;
  int r = 0;
  for (; r + 4 * kLanes <= full; r += 4 * kLanes) {
    const float* w0 = w + static_cast<std::size_t>(r) * n;
    const float* w1 = w0 + block;
    const float* w2 = w1 + block;
    const float* w3 = w2 + block;
    float32x4_t a0 = vdupq_n_f32(0.0f), a1 = vdupq_n_f32(0.0f), a2 = vdupq_n_f32(0.0f), a3 = vdupq_n_f32(0.0f);
    for (int j = 0; j < n; ++j) {
      const float32x4_t xv = vdupq_n_f32(x[j]);
      const std::size_t o = static_cast<std::size_t>(j) * kLanes;
      a0 = mul_add(a0, vld1q_f32(w0 + o), xv);
      a1 = mul_add(a1, vld1q_f32(w1 + o), xv);
      a2 = mul_add(a2, vld1q_f32(w2 + o), xv);
      a3 = mul_add(a3, vld1q_f32(w3 + o), xv);
    }
    vst1q_f32(out + r, a0);
    vst1q_f32(out + r + kLanes, a1);
    vst1q_f32(out + r + 2 * kLanes, a2);
    vst1q_f32(out + r + 3 * kLanes, a3);
  }
  for (; r < full; r += kLanes) {
    const float* w0 = w + static_cast<std::size_t>(r) * n;
    float32x4_t a = vdupq_n_f32(0.0f);
    for (int j = 0; j < n; ++j)
      a = mul_add(a, vld1q_f32(w0 + static_cast<std::size_t>(j) * kLanes), vdupq_n_f32(x[j]));
    vst1q_f32(out + r, a);
  }
  // The d % 4 tail rows are row-major: the reference loop computes them.
  if (full < d) reference::matmul_f32(out + full, x, w + static_cast<std::size_t>(full) * n, n, d - full);
}

// acc (4 x int32) += the 16 products w[j] * x[j], exactly: each int8 product fits int16
// (|-128 * -128| = 2^14), and vpadalq_s16 adds adjacent pairs of them into int32 lanes.
inline int32x4_t dot16(int32x4_t acc, const std::int8_t* w, int8x16_t x) {
  const int8x16_t wv = vld1q_s8(w);
  acc = vpadalq_s16(acc, vmull_s8(vget_low_s8(wv), vget_low_s8(x)));
  return vpadalq_s16(acc, vmull_high_s8(wv, x));
}

// Rows r..r+3 (row-major, stride n): the int32 sum of the group [j0, j0 + gs) of each row,
// as one vector (lane k = row k). gs is a multiple of 16.
inline int32x4_t group_sums(const std::int8_t* wr, const std::int8_t* xq, std::size_t n, int j0, int gs) {
  int32x4_t s0 = vdupq_n_s32(0), s1 = vdupq_n_s32(0), s2 = vdupq_n_s32(0), s3 = vdupq_n_s32(0);
  for (int j = j0; j < j0 + gs; j += 16) {
    const int8x16_t x = vld1q_s8(xq + j);
    s0 = dot16(s0, wr + j, x);
    s1 = dot16(s1, wr + n + j, x);
    s2 = dot16(s2, wr + 2 * n + j, x);
    s3 = dot16(s3, wr + 3 * n + j, x);
  }
  // Pairwise adds: lane k of the result is the sum of the 4 lanes of s_k (integer, exact).
  return vpaddq_s32(vpaddq_s32(s0, s1), vpaddq_s32(s2, s3));
}

void matmul_q80(float* out, const std::int8_t* xq, const float* xs, const std::int8_t* wq, const float* ws, int n,
                int d, int gs) {
  const int full = gs % 16 == 0 ? d / kLanes * kLanes : 0;  // other group sizes: all scalar
  const int groups = n / gs;
  const std::size_t sn = static_cast<std::size_t>(n), sg = static_cast<std::size_t>(groups);
  for (int r = 0; r < full; r += kLanes) {
    const std::int8_t* wr = wq + static_cast<std::size_t>(r) * sn;
    const float* wsr = ws + static_cast<std::size_t>(r) * sg;
    float32x4_t acc = vdupq_n_f32(0.0f);
    for (int g = 0; g < groups; ++g) {
      const float32x4_t isum = vcvtq_f32_s32(group_sums(wr, xq, sn, g * gs, gs));
      // Scale of group g of row r + k is ws[(r + k) * groups + g].
      float32x4_t wscale = vdupq_n_f32(wsr[g]);
      wscale = vsetq_lane_f32(wsr[sg + g], wscale, 1);
      wscale = vsetq_lane_f32(wsr[2 * sg + g], wscale, 2);
      wscale = vsetq_lane_f32(wsr[3 * sg + g], wscale, 3);
      acc = vaddq_f32(acc, vmulq_f32(vmulq_f32(isum, wscale), vdupq_n_f32(xs[g])));
    }
    vst1q_f32(out + r, acc);
  }
  if (full < d) {
    reference::matmul_q80(out + full, xq, xs, wq + static_cast<std::size_t>(full) * sn,
                          ws + static_cast<std::size_t>(full) * sg, n, d - full, gs);
  }
}

}  // namespace

const Kernels& neon_kernels() {
  static const Kernels kNeon = [] {
    Kernels k = reference_kernels();
    k.name = "neon";
    k.matmul[type_index(TensorType::kF32)] = matmul_f32_entry<matmul_f32>;
    k.matmul[type_index(TensorType::kQ80)] = matmul_q80_entry<matmul_q80>;
    k.interleave[type_index(TensorType::kF32)] = fixed_interleave<kLanes>;
    return k;
  }();
  return kNeon;
}

}  // namespace pocketlm
