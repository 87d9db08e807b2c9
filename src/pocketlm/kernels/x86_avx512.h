// The avx512 backend's matmuls (AVX-512F/BW), written once over a `Dot` policy like
// kernels/x86_int8.h: Avx512MaddubsDot (vpmaddubsw, vpmaddwd, vpaddd) in kernels/avx512.cpp and
// Avx512VnniDot (vpdpbusd) in kernels/avx512vnni.cpp, each file compiled for its own instruction
// set (so that no VNNI instruction can reach a CPU without it). 16 lanes, one output row each:
// - fp32 and f16: weights interleaved by 16 rows (quant/row_interleave.h, block_interleave.h);
//   each lane adds w*x over the columns in index order, a separate multiply and add, as the
//   reference does.
// - Q8_0 and Q4_0: 16 rows per interleaved block, 4 bytes of a row per 32-bit lane
//   (quant/block_interleave.h), so each row's block sum stays in its own lane; then the
//   reference's acc = acc + (float)isum * (d_w * d_x), blocks in order.
// - q80 (llama2.c's int8): kernels/x86_q80.h over Vec512, 16 rows per block in 4-byte lanes
//   (quant/q80_interleave.h), four runs of blocks read at once.
// Everything here has internal linkage: one copy per including backend file.
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "pocketlm/kernels/batch.h"
#include "pocketlm/kernels/kernels.h"
#include "pocketlm/kernels/reference.h"
#include "pocketlm/kernels/x86_q80.h"
#include "pocketlm/quant/fp16.h"
#include "pocketlm/quant/q4_0.h"
#include "pocketlm/quant/q8_0.h"
#include "pocketlm/quant/q80.h"

// GCC 12's AVX-512 conversion intrinsics pass _mm512_undefined_ps(), which -Wmaybe-uninitialized
// reports at every use (as in x86_expf.cpp): not a defect of this code.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

namespace pocketlm {
namespace {  // NOLINT(google-build-namespaces): one copy per backend file

constexpr int kLanes16 = 16;
// Weight streams a matmul reads at once, each a run of consecutive 16-row blocks far from the
// others': one core keeps more cache-line fills in flight with several sequential streams than
// with one (the hardware prefetcher follows each), which is what decode from DRAM needs.
constexpr int kStreams512 = 4;

// 512-bit vectors for kernels/x86_q80.h: 16 lanes, one output row each.
struct Vec512 {
  using I = __m512i;
  using F = __m512;
  static constexpr int kLanes = kLanes16;
  static constexpr int kStreams = kStreams512;
  static I splat(std::int32_t v) { return _mm512_set1_epi32(v); }
  static I load(const void* p) { return _mm512_loadu_si512(p); }
  static F to_float(I v) { return _mm512_cvtepi32_ps(v); }
  static F zero_f() { return _mm512_setzero_ps(); }
  static F splat_f(float v) { return _mm512_set1_ps(v); }
  static F loadf(const float* p) { return _mm512_loadu_ps(p); }
  static void storef(float* p, F v) { _mm512_storeu_ps(p, v); }
  static F add(F a, F b) { return _mm512_add_ps(a, b); }
  static F mul(F a, F b) { return _mm512_mul_ps(a, b); }
};

// ---- fp32 and f16 ----

// 4 blocks of 16 rows at once: four weight streams, four independent add chains.
inline void matmul_f32_512(float* out, const float* x, const float* w, int n, int d) {
  const int full = d / kLanes16 * kLanes16;
  const std::size_t block = static_cast<std::size_t>(kLanes16) * n;
  int r = 0;
  for (; r + 4 * kLanes16 <= full; r += 4 * kLanes16) {
    const float* w0 = w + static_cast<std::size_t>(r) * n;
    __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    for (int j = 0; j < n; ++j) {
      const __m512 xv = _mm512_set1_ps(x[j]);
      const std::size_t o = static_cast<std::size_t>(j) * kLanes16;
      a0 = _mm512_add_ps(a0, _mm512_mul_ps(_mm512_loadu_ps(w0 + o), xv));
      a1 = _mm512_add_ps(a1, _mm512_mul_ps(_mm512_loadu_ps(w0 + block + o), xv));
      a2 = _mm512_add_ps(a2, _mm512_mul_ps(_mm512_loadu_ps(w0 + 2 * block + o), xv));
      a3 = _mm512_add_ps(a3, _mm512_mul_ps(_mm512_loadu_ps(w0 + 3 * block + o), xv));
    }
    _mm512_storeu_ps(out + r, a0);
    _mm512_storeu_ps(out + r + kLanes16, a1);
    _mm512_storeu_ps(out + r + 2 * kLanes16, a2);
    _mm512_storeu_ps(out + r + 3 * kLanes16, a3);
  }
  for (; r < full; r += kLanes16) {
    const float* w0 = w + static_cast<std::size_t>(r) * n;
    __m512 a = _mm512_setzero_ps();
    for (int j = 0; j < n; ++j)
      a = _mm512_add_ps(a, _mm512_mul_ps(_mm512_loadu_ps(w0 + static_cast<std::size_t>(j) * kLanes16),
                                         _mm512_set1_ps(x[j])));
    _mm512_storeu_ps(out + r, a);
  }
  if (full < d) reference::matmul_f32(out + full, x, w + static_cast<std::size_t>(full) * n, n, d - full);
}

// F16 weights interleaved by 16 rows, each converted exactly (vcvtph2ps), then as fp32.
inline void matmul_f16_512(float* out, const Matrix& w, const Activation& x, int rows) {
  const int n = w.cols;
  const float* xv = x.f32();
  const auto* h = static_cast<const std::uint16_t*>(w.values);
  const int full = w.interleave == kLanes16 ? rows / kLanes16 * kLanes16 : 0;
  const std::size_t block = static_cast<std::size_t>(kLanes16) * n;
  auto load = [](const std::uint16_t* p) {
    return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  };
  int r = 0;
  for (; r + 2 * kLanes16 <= full; r += 2 * kLanes16) {
    const std::uint16_t* w0 = h + static_cast<std::size_t>(r) * n;
    __m512 a0 = _mm512_setzero_ps(), a1 = a0;
    for (int j = 0; j < n; ++j) {
      const __m512 xj = _mm512_set1_ps(xv[j]);
      const std::size_t o = static_cast<std::size_t>(j) * kLanes16;
      a0 = _mm512_add_ps(a0, _mm512_mul_ps(load(w0 + o), xj));
      a1 = _mm512_add_ps(a1, _mm512_mul_ps(load(w0 + block + o), xj));
    }
    _mm512_storeu_ps(out + r, a0);
    _mm512_storeu_ps(out + r + kLanes16, a1);
  }
  for (; r < full; r += kLanes16) {
    const std::uint16_t* w0 = h + static_cast<std::size_t>(r) * n;
    __m512 a = _mm512_setzero_ps();
    for (int j = 0; j < n; ++j)
      a = _mm512_add_ps(a, _mm512_mul_ps(load(w0 + static_cast<std::size_t>(j) * kLanes16), _mm512_set1_ps(xv[j])));
    _mm512_storeu_ps(out + r, a);
  }
  if (full < rows) reference::matmul_f16(out + full, rows_from(w, full), x, rows - full);
}

// ---- Q8_0 and Q4_0 (ggml blocks) ----

constexpr int kBlockChunk512 = 64;

// The exact int32 block sums of N 16-row groups (lane k = row k of each), from their interleaved
// chunks' values q[j] and the activation block's int8 values xq.
template <class Dot, bool kQ4, int N>
inline void block_sums_512(const unsigned char* const* q, const std::int8_t* xq, __m512i* s) {
  __m512i a[N];
  for (int j = 0; j < N; ++j) a[j] = _mm512_setzero_si512();
  if constexpr (kQ4) {
    // 4 groups of 64 bytes: lane k = 4 bytes of row k = weights 4t..4t+3 (low nibbles) and
    // 16+4t..16+4t+3 (high nibbles); pair sums at most 8 * 15 * 127 (Dot::add_small).
    const __m512i low4 = _mm512_set1_epi8(0x0F);
    for (int t = 0; t < 4; ++t) {
      const __m512i xl = _mm512_set1_epi32(load_x4(xq + 4 * t));
      const __m512i xh = _mm512_set1_epi32(load_x4(xq + 16 + 4 * t));
      for (int j = 0; j < N; ++j) {
        const __m512i v = _mm512_loadu_si512(q[j] + 64 * t);
        a[j] = Dot::add_small(a[j], _mm512_and_si512(v, low4), xl);
        a[j] = Dot::add_small(a[j], _mm512_and_si512(_mm512_srli_epi16(v, 4), low4), xh);
      }
    }
    for (int j = 0; j < N; ++j) s[j] = Dot::widen_small(a[j]);
  } else {
    // A biased Dot sums (w + 128) * x; the caller subtracts 128 * (the block's activation sum).
    for (int t = 0; t < 8; ++t) {
      const __m512i xv = _mm512_set1_epi32(load_x4(xq + 4 * t));
      for (int j = 0; j < N; ++j) {
        const __m512i v = _mm512_loadu_si512(q[j] + 64 * t);
        a[j] = int8_dot_add<Dot>(a[j], v, xv);
      }
    }
    for (int j = 0; j < N; ++j) s[j] = a[j];
  }
}

// One pass of blocks [b0, b1) over the N 16-row groups group[0..N) of an interleaved Q4_0 or
// Q8_0 matrix (rows of row_bytes): each lane's accumulator starts at 0 (b0 = 0) or from out[],
// then adds the reference's (float)(isum - correction) * (d_w * d_x) block by block.
template <class Dot, bool kQ4, int N>
inline void ggml_pass_512(float* out, const unsigned char* w, const unsigned char* xb, std::size_t row_bytes, int b0,
                          int b1, const float* dx, const std::int32_t* xsum8, const int* group) {
  constexpr std::size_t kBs = kQ4 ? kQ4_0BlockBytes : kQ8_0BlockBytes;
  const unsigned char* base[N];
  __m512 acc[N];
  for (int j = 0; j < N; ++j) {
    base[j] = w + static_cast<std::size_t>(group[j]) * kLanes16 * row_bytes;
    acc[j] = b0 == 0 ? _mm512_setzero_ps() : _mm512_loadu_ps(out + group[j] * kLanes16);
  }
  for (int b = b0; b < b1; ++b) {
    const std::size_t at = static_cast<std::size_t>(b) * kLanes16 * kBs;
    const unsigned char* q[N];
    for (int j = 0; j < N; ++j) q[j] = base[j] + at + 2 * kLanes16;
    const auto* xq = reinterpret_cast<const std::int8_t*>(xb + static_cast<std::size_t>(b) * kQ8_0BlockBytes + 2);
    __m512i sums[N];
    block_sums_512<Dot, kQ4, N>(q, xq, sums);
    const __m512i corr = _mm512_set1_epi32(xsum8[b - b0]);
    const __m512 dxv = _mm512_set1_ps(dx[b - b0]);
    for (int j = 0; j < N; ++j) {
      const __m512 d =
          _mm512_mul_ps(_mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(base[j] + at))), dxv);
      acc[j] = _mm512_add_ps(acc[j], _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(sums[j], corr)), d));
    }
  }
  for (int j = 0; j < N; ++j) _mm512_storeu_ps(out + group[j] * kLanes16, acc[j]);
}

// Rows [0, full) of a 16-row interleaved Q4_0 or Q8_0 matrix: the row groups cut into kStreams
// runs of equal length far apart, one group of each run per pass (avx2's matmul_ggml_rows, 16
// lanes), then the few groups left over one at a time; blocks in chunks. The integer
// correction per block: Q4_0's nibbles are q + 8 (8 * the activation sum), a biased Dot's Q8_0
// bytes w + 128 (128 * the activation sum).
template <class Dot, bool kQ4>
void matmul_ggml_rows_512(float* out, const unsigned char* w, const unsigned char* xb, int n, int full) {
  constexpr int kStreams = kStreams512;
  constexpr std::size_t kBs = kQ4 ? kQ4_0BlockBytes : kQ8_0BlockBytes;
  const int nb = n / 32;
  const std::size_t row_bytes = static_cast<std::size_t>(nb) * kBs;
  float dx[kBlockChunk512];
  std::int32_t xsum8[kBlockChunk512];
  const int groups = full / kLanes16, run = groups / kStreams;
  for (int b0 = 0; b0 < nb; b0 += kBlockChunk512) {
    const int b1 = nb - b0 < kBlockChunk512 ? nb : b0 + kBlockChunk512;
    for (int b = b0; b < b1; ++b) {
      const unsigned char* xblk = xb + static_cast<std::size_t>(b) * kQ8_0BlockBytes;
      dx[b - b0] = fp16_to_fp32(load_fp16(xblk));
      std::int32_t s = 0;
      for (int i = 0; i < 32; ++i) s += static_cast<std::int8_t>(xblk[2 + i]);
      xsum8[b - b0] = kQ4 ? 8 * s : (Dot::kBiased ? 128 * s : 0);
    }
    for (int g = 0; g < run; ++g) {
      int group[kStreams];
      for (int j = 0; j < kStreams; ++j) group[j] = g + j * run;
      ggml_pass_512<Dot, kQ4, kStreams>(out, w, xb, row_bytes, b0, b1, dx, xsum8, group);
    }
    for (int g = kStreams * run; g < groups; ++g) ggml_pass_512<Dot, kQ4, 1>(out, w, xb, row_bytes, b0, b1, dx, xsum8, &g);
  }
}

template <class Dot, bool kQ4>
void matmul_ggml_512(float* out, const Matrix& w, const Activation& x, int rows) {
  const int full = w.interleave == kLanes16 ? rows / kLanes16 * kLanes16 : 0;
  const auto* xb = static_cast<const unsigned char*>(x.values);
  if (full > 0) matmul_ggml_rows_512<Dot, kQ4>(out, static_cast<const unsigned char*>(w.values), xb, w.cols, full);
  reference::matmul_ggml_tail<kQ4>(out, w, x, full, rows);
}

}  // namespace
}  // namespace pocketlm

#pragma GCC diagnostic pop
