// The q80 matmuls of the x86 backends (llama2.c's int8: int8 values, one fp32 scale per group
// of gs in a stream of its own), single token and batched, written once over a vector width `V`
// (Vec256 in kernels/x86_vec256.h: 8 lanes, avx2 and avxvnni; Vec512 in kernels/x86_vec512.h: 16
// lanes) and a `Dot` policy of that width.
// The rows are interleaved by V::kLanes in 4-byte lanes (quant/q80_interleave.h): chunk t of a
// block's group holds bytes 4t..4t+3 of each of its rows, so a multiply-add against 4
// activation bytes broadcast leaves row k's partial sum in lane k, with no horizontal sums (an
// 8-row kernel with a tree of them per group was compute-bound at DRAM's rate,
// bench/README.md). A biased Dot adds (w + 128) * x starting from -128 * (the group's activation
// sum); either way the int32 sums are exact. Then the reference's
// acc = acc + ((float)isum * w_scale) * x_scale, groups in order, so every lane gives the bits of
// reference::matmul_q80.
// A `Dot` (kernels/avx2.cpp, avxvnni.cpp, avx512.cpp, avx512vnni.cpp) provides, on V::I:
//   int8_add(acc, w, x)   acc + the int32 sum of each lane's 4 products w[i] * x[i] (signed
//                         bytes, |x| <= 127); with kBiased true, of (w[i] + 128) * x[i], so the
//                         caller subtracts 128 * (the sum of x)
//   add_small(acc, u, s), widen_small(acc)   unsigned-by-signed byte sums known to fit int16
//                         (Q4_0's nibbles, kernels/x86_ggml.h), widened to int32 once at the end
// Included by backend files only, each compiled for its own instruction set: everything here
// has internal linkage, one copy per including file.
#pragma once

#include <cstddef>
#include <cstdint>

#include "pocketlm/kernels/batch.h"
#include "pocketlm/kernels/kernels.h"
#include "pocketlm/kernels/reference.h"
#include "pocketlm/quant/q80_interleave.h"

namespace pocketlm {
namespace {  // NOLINT(google-build-namespaces): one copy per backend file

// Groups per chunk: their activation corrections are computed once per chunk.
constexpr int kQ80GroupChunk = 64;

// 128 * (the sum of the gs activation bytes of each group [g0, g1)) for a biased Dot, else 0.
template <class Dot>
inline void q80_corrections(const std::int8_t* xq, int gs, int g0, int g1, std::int32_t* corr) {
  for (int g = g0; g < g1; ++g) {
    std::int32_t s = 0;
    if constexpr (Dot::kBiased)
      for (int i = 0; i < gs; ++i) s += xq[static_cast<std::size_t>(g) * gs + i];
    corr[g - g0] = 128 * s;
  }
}

// The exact int32 sums of one group of N blocks (q[j]: block j's group) with the activations
// xg, lane k = row k.
template <class V, class Dot, int N>
inline void q80_group_sums(const std::int8_t* const* q, const std::int8_t* xg, int gs, std::int32_t corr,
                           typename V::I* s) {
  constexpr int kChunk = 4 * V::kLanes;  // bytes per 4-byte lane chunk of a block
  for (int j = 0; j < N; ++j) s[j] = V::splat(-corr);
  for (int t = 0; t < gs / 4; ++t) {
    const typename V::I xv = V::splat4(xg + 4 * t);
    for (int j = 0; j < N; ++j) s[j] = Dot::int8_add(s[j], V::load(q[j] + kChunk * t), xv);
  }
}

// Groups [g0, g1) of the N blocks block[0..N): each lane's accumulator starts at 0 (g0 = 0) or
// from out[] (a float round trip, exact).
template <class V, class Dot, int N>
inline void q80_pass(float* out, const std::int8_t* wq, const float* ws, const std::int8_t* xq, const float* xs,
                     const std::int32_t* corr, int n, int gs, int g0, int g1, const int* block) {
  constexpr std::size_t kL = V::kLanes;
  const std::size_t groups = static_cast<std::size_t>(n / gs);
  const std::int8_t* base[N];
  const float* scales[N];
  typename V::F acc[N];
  for (int j = 0; j < N; ++j) {
    base[j] = wq + static_cast<std::size_t>(block[j]) * kL * n;
    scales[j] = ws + static_cast<std::size_t>(block[j]) * kL * groups;
    acc[j] = g0 == 0 ? V::zero_f() : V::loadf(out + block[j] * kL);
  }
  for (int g = g0; g < g1; ++g) {
    const std::int8_t* q[N];
    for (int j = 0; j < N; ++j) q[j] = base[j] + static_cast<std::size_t>(g) * kL * gs;
    typename V::I sums[N];
    q80_group_sums<V, Dot, N>(q, xq + static_cast<std::size_t>(g) * gs, gs, corr[g - g0], sums);
    const typename V::F xsv = V::splat_f(xs[g]);
    for (int j = 0; j < N; ++j) {
      const typename V::F wsv = V::loadf(scales[j] + static_cast<std::size_t>(g) * kL);
      acc[j] = V::add(acc[j], V::mul(V::mul(V::to_float(sums[j]), wsv), xsv));
    }
  }
  for (int j = 0; j < N; ++j) V::storef(out + block[j] * kL, acc[j]);
}

// Rows [0, rows): the blocks cut into V::kStreams runs far apart, a block of each run per pass
// (several weight and scale streams: one core keeps more cache-line fills in flight with several
// sequential streams than with one, docs/performance.md), the blocks left over one at a time,
// then the row-major tail as the reference computes it.
template <class V, class Dot>
void matmul_q80_lanes(float* out, const Matrix& w, const Activation& x, int rows) {
  constexpr int kS = V::kStreams;
  const int n = w.cols, gs = w.group, groups = n / gs;
  const auto* wq = static_cast<const std::int8_t*>(w.values);
  const auto* xq = static_cast<const std::int8_t*>(x.values);
  const int full = w.interleave == V::kLanes ? rows / V::kLanes * V::kLanes : 0;
  const int blocks = full / V::kLanes, run = blocks / kS;
  std::int32_t corr[kQ80GroupChunk];
  for (int g0 = 0; g0 < groups && full > 0; g0 += kQ80GroupChunk) {
    const int g1 = groups - g0 < kQ80GroupChunk ? groups : g0 + kQ80GroupChunk;
    q80_corrections<Dot>(xq, gs, g0, g1, corr);
    for (int b = 0; b < run; ++b) {
      int block[kS];
      for (int j = 0; j < kS; ++j) block[j] = b + j * run;
      q80_pass<V, Dot, kS>(out, wq, w.scales, xq, x.scales, corr, n, gs, g0, g1, block);
    }
    for (int b = kS * run; b < blocks; ++b) q80_pass<V, Dot, 1>(out, wq, w.scales, xq, x.scales, corr, n, gs, g0, g1, &b);
  }
  reference::matmul_q80_tail(out, w, x, full, rows);
}

// Tokens per chunk of the batched q80 matmul: their corrections of a chunk of groups wait on
// the stack (16 KiB).
constexpr int kQ80BatchTokens = 64;

// T tokens' int32 sums of one block's group wg, each weight chunk loaded once for all T (T
// independent chains).
template <class V, class Dot, int T>
inline void q80_tokens(const std::int8_t* wg, const std::int8_t* const* xg, const std::int32_t* corr, int gs,
                       typename V::I* s) {
  constexpr int kChunk = 4 * V::kLanes;
  for (int t = 0; t < T; ++t) s[t] = V::splat(-corr[t * kQ80GroupChunk]);
  for (int c = 0; c < gs / 4; ++c) {
    const typename V::I v = V::load(wg + kChunk * c);
    for (int t = 0; t < T; ++t) s[t] = Dot::int8_add(s[t], v, V::splat4(xg[t] + 4 * c));
  }
}

// T tokens' groups [g0, g1) of one block of V::kLanes rows (weights wb, scales wsb): the
// accumulators stay in registers across the groups and go to out once (an out row per token is
// a vocabulary apart for the classifier: writing it back per group would miss every cache).
// Per token and lane the arithmetic of q80_pass, groups in order; the accumulator starts at 0
// (g0 = 0) or from out[] (a float round trip, exact).
template <class V, class Dot, int T>
inline void q80_batch_block(float* const* o, const std::int8_t* wb, const float* wsb, const std::int8_t* const* xq,
                            const float* const* xs, const std::int32_t* corr, int gs, int g0, int g1) {
  constexpr std::size_t kL = V::kLanes;
  typename V::F acc[T];
  for (int t = 0; t < T; ++t) acc[t] = g0 == 0 ? V::zero_f() : V::loadf(o[t]);
  for (int g = g0; g < g1; ++g) {
    const std::size_t at = static_cast<std::size_t>(g) * static_cast<std::size_t>(gs);
    const std::int8_t* xg[T];
    for (int t = 0; t < T; ++t) xg[t] = xq[t] + at;
    typename V::I s[T];
    q80_tokens<V, Dot, T>(wb + at * kL, xg, corr + (g - g0), gs, s);
    const typename V::F wsv = V::loadf(wsb + static_cast<std::size_t>(g) * kL);
    for (int t = 0; t < T; ++t) acc[t] = V::add(acc[t], V::mul(V::mul(V::to_float(s[t]), wsv), V::splat_f(xs[t][g])));
  }
  for (int t = 0; t < T; ++t) V::storef(o[t], acc[t]);
}

// The batched q80 matmul (kernels/batch.h): per block of V::kLanes rows, the tokens four at a
// time share each chunk of its weights (read from memory for the first four, from L1 for the
// rest: a block is kLanes * n bytes). Other layouts take the generic path.
template <class V, class Dot>
void matmul_q80_batch_lanes(float* out, std::size_t out_stride, const Matrix& w, const ActivationBatch& x, int rows) {
  constexpr int kT = 4;
  if (w.interleave != V::kLanes) {
    matmul_batch_tiled(matmul_q80_lanes<V, Dot>, out, out_stride, w, x, rows);
    return;
  }
  const int n = w.cols, gs = w.group, groups = n / gs, full = rows / V::kLanes * V::kLanes;
  const auto* wq = static_cast<const std::int8_t*>(w.values);
  auto xq = [&](int t) { return static_cast<const std::int8_t*>(x.at(t).values); };
  auto xs = [&](int t) { return x.scales + static_cast<std::size_t>(t) * x.scale_stride; };
  std::int32_t corr[kQ80BatchTokens * kQ80GroupChunk];  // [token][group - g0]
  for (int t0 = 0; t0 < x.count; t0 += kQ80BatchTokens) {
    const int count = x.count - t0 < kQ80BatchTokens ? x.count - t0 : kQ80BatchTokens;
    for (int g0 = 0; g0 < groups; g0 += kQ80GroupChunk) {
      const int g1 = groups - g0 < kQ80GroupChunk ? groups : g0 + kQ80GroupChunk;
      for (int t = 0; t < count; ++t) q80_corrections<Dot>(xq(t0 + t), gs, g0, g1, corr + t * kQ80GroupChunk);
      for (int r = 0; r < full; r += V::kLanes) {
        const std::int8_t* wb = wq + static_cast<std::size_t>(r) * n;
        const float* wsb = w.scales + static_cast<std::size_t>(r) * groups;
        for (int t = 0; t < count;) {
          const int m = count - t >= kT ? kT : 1;  // the last count % 4 tokens one at a time
          float* o[kT];
          const std::int8_t* xt[kT];
          const float* st[kT];
          for (int i = 0; i < m; ++i) {
            o[i] = out + static_cast<std::size_t>(t0 + t + i) * out_stride + r;
            xt[i] = xq(t0 + t + i);
            st[i] = xs(t0 + t + i);
          }
          const std::int32_t* c = corr + t * kQ80GroupChunk;
          if (m == kT)
            q80_batch_block<V, Dot, kT>(o, wb, wsb, xt, st, c, gs, g0, g1);
          else
            q80_batch_block<V, Dot, 1>(o, wb, wsb, xt, st, c, gs, g0, g1);
          t += m;
        }
      }
    }
  }
  for (int t = 0; t < x.count; ++t)  // the row-major tail, as matmul_q80_lanes computes it
    reference::matmul_q80_tail(out + static_cast<std::size_t>(t) * out_stride, w, x.at(t), full, rows);
}

// Rows per interleaved q80 block: V::kLanes in 4-byte lanes where the group size is a multiple
// of 4, else row-major (the matmuls then compute every row as the reference does).
template <class V>
int q80_interleave_lanes(int group) {
  return q80_interleave_rows(group, V::kLanes);
}

}  // namespace
}  // namespace pocketlm
