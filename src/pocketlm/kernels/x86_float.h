// The fp32 and F16 matmuls of the x86 backends, written once over a vector width `V` (Vec256:
// 8 lanes, avx2 and avxvnni; Vec512: 16 lanes, avx512), like kernels/x86_q80.h.
// The rows are interleaved by V::kLanes at load (quant/row_interleave.h, block_interleave.h:
// element j of row k of a block at j * kLanes + k), so one vector load holds column j of every
// row of a block and each lane is one output row. A lane adds w * x over the columns in index
// order with a separate multiply and add (no FMA: a fused multiply-add rounds once and would
// change the result), as the reference does; F16 weights are converted exactly (vcvtph2ps)
// first. Several blocks go at once: independent add chains hide the add's latency, and each is
// a weight stream of its own.
// Included by backend files only: internal linkage, one copy per including file.
#pragma once

#include <cstddef>
#include <cstdint>

#include "pocketlm/kernels/kernels.h"
#include "pocketlm/kernels/reference.h"

namespace pocketlm {
namespace {  // NOLINT(google-build-namespaces): one copy per backend file

template <class V>
inline typename V::F load_weights(const float* p) {
  return V::loadf(p);
}
template <class V>
inline typename V::F load_weights(const std::uint16_t* p) {
  return V::load_fp16(p);
}

// The N blocks of rows starting at w0 (block j at w0 + j * block_elems) times x[n], into
// out[N * kLanes].
template <class V, int N, class T>
inline void float_blocks(float* out, const float* x, const T* w0, std::size_t block_elems, int n) {
  constexpr std::size_t kL = V::kLanes;
  typename V::F a[N];
  for (int i = 0; i < N; ++i) a[i] = V::zero_f();
  for (int j = 0; j < n; ++j) {
    const typename V::F xv = V::splat_f(x[j]);
    const std::size_t o = static_cast<std::size_t>(j) * kL;
    for (int i = 0; i < N; ++i) a[i] = V::add(a[i], V::mul(load_weights<V>(w0 + i * block_elems + o), xv));
  }
  for (int i = 0; i < N; ++i) V::storef(out + i * kL, a[i]);
}

// Rows [0, full) of an interleaved matrix w[full, n]: N blocks per pass, then one at a time.
template <class V, int N, class T>
void float_rows(float* out, const float* x, const T* w, int n, int full) {
  const std::size_t block = static_cast<std::size_t>(V::kLanes) * n;
  int r = 0;
  for (; r + N * V::kLanes <= full; r += N * V::kLanes)
    float_blocks<V, N>(out + r, x, w + static_cast<std::size_t>(r) * n, block, n);
  for (; r < full; r += V::kLanes) float_blocks<V, 1>(out + r, x, w + static_cast<std::size_t>(r) * n, block, n);
}

// out[d] = w[d, n] x[n], fp32 (the matmul_f32_entry form): 4 blocks per pass; the d % kLanes
// tail rows are row-major and the reference loop computes them.
template <class V>
void matmul_f32_lanes(float* out, const float* x, const float* w, int n, int d) {
  const int full = d / V::kLanes * V::kLanes;
  float_rows<V, 4>(out, x, w, n, full);
  if (full < d) reference::matmul_f32(out + full, x, w + static_cast<std::size_t>(full) * n, n, d - full);
}

// F16 weights: 2 blocks per pass; a matrix interleaved for another width, and the tail rows,
// as the reference computes them.
template <class V>
void matmul_f16_lanes(float* out, const Matrix& w, const Activation& x, int rows) {
  const int full = w.interleave == V::kLanes ? rows / V::kLanes * V::kLanes : 0;
  float_rows<V, 2>(out, x.f32(), static_cast<const std::uint16_t*>(w.values), w.cols, full);
  if (full < rows) reference::matmul_f16(out + full, rows_from(w, full), x, rows - full);
}

}  // namespace
}  // namespace pocketlm
