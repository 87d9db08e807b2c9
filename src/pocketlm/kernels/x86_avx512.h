// The avx512 backend's matmuls (AVX-512F/BW), 16 lanes of 64-byte vectors, one output row
// each:
// - fp32 and f16 (here): weights interleaved by 16 rows (quant/row_interleave.h,
//   block_interleave.h); each lane adds w*x over the columns in index order, a separate
//   multiply and add, as the reference does.
// - Q8_0, Q4_0 and q80: kernels/x86_ggml.h and x86_q80.h over Vec512 (below), 16 rows per block
//   with 4 bytes of a row per 32-bit lane, four runs of blocks read at once; their int8 sums go
//   through a `Dot` policy: Avx512MaddubsDot (vpmaddubsw, vpmaddwd, vpaddd) in
//   kernels/avx512.cpp, Avx512VnniDot (vpdpbusd) in kernels/avx512vnni.cpp, each file compiled
//   for its own instruction set (so that no VNNI instruction can reach a CPU without it).
// Everything here has internal linkage: one copy per including backend file.
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "pocketlm/kernels/kernels.h"
#include "pocketlm/kernels/reference.h"
#include "pocketlm/kernels/x86_ggml.h"
#include "pocketlm/kernels/x86_q80.h"

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

// 512-bit vectors for kernels/x86_q80.h and x86_ggml.h: 16 lanes, one output row each.
struct Vec512 {
  using I = __m512i;
  using F = __m512;
  static constexpr int kLanes = kLanes16;
  static constexpr int kStreams = kStreams512;
  static constexpr int kGgmlStreams = kStreams512;
  static I splat(std::int32_t v) { return _mm512_set1_epi32(v); }
  static I load(const void* p) { return _mm512_loadu_si512(p); }
  static I and_i(I a, I b) { return _mm512_and_si512(a, b); }
  static I sub_i(I a, I b) { return _mm512_sub_epi32(a, b); }
  static I shift_right4(I v) { return _mm512_srli_epi16(v, 4); }
  static F load_fp16(const void* p) { return _mm512_cvtph_ps(_mm256_loadu_si256(static_cast<const __m256i*>(p))); }
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

}  // namespace
}  // namespace pocketlm

#pragma GCC diagnostic pop
