// The avx512 backend's int8 matmuls (q80, Q8_0, Q4_0 on 16 lanes) on a CPU with AVX512_VNNI:
// vpdpbusd multiplies unsigned by signed bytes and adds each group of 4 products straight into an int32 lane (one instruction
// for vpmaddubsw, vpmaddwd and vpaddd), without saturating; the group sums are exact integers
// in any order, so the bits are reference's. Same name and layouts as kernels/avx512.cpp, whose
// table this file's overrides go on. Compiled with -mavx512f -mavx512bw -mavx512vl -mavx512vnni
// -mf16c; chosen when the CPU reports AVX512_VNNI too (kernels/registry.cpp).
#include <immintrin.h>

#include "pocketlm/kernels/kernels.h"
#include "pocketlm/kernels/x86_vec512.h"

namespace pocketlm {

Kernels avx512_table(const Kernels& base);  // kernels/avx512.cpp
const Kernels& avx2_kernels();              // kernels/avx2.cpp

namespace {

struct Avx512VnniDot {
  static inline __m512i add(__m512i acc, __m512i u, __m512i s) { return _mm512_dpbusd_epi32(acc, u, s); }
  // acc + the sums of 4 products (w + 128) * x: w's bytes with the top bit flipped are w + 128,
  // unsigned, and vpdpbusd never saturates. The caller removes 128 * (the activations' sum).
  static constexpr bool kBiased = true;
  static inline __m512i int8_add(__m512i acc, __m512i w, __m512i x) {
    return add(acc, _mm512_xor_si512(w, _mm512_set1_epi8(static_cast<char>(0x80))), x);
  }
  // IQ4_XS (x86_ggml.h): g is already the grid value + 128; |x| is not needed.
  static inline __m512i grid_add(__m512i acc, __m512i g, __m512i x, __m512i) { return add(acc, g, x); }
  static inline __m512i add_small(__m512i acc, __m512i u, __m512i s) { return add(acc, u, s); }
  static inline __m512i widen_small(__m512i acc) { return acc; }
};

}  // namespace

const Kernels& avx512vnni_kernels() {
  static const Kernels kAvx512Vnni = [] {
    Kernels k = avx512_table(avx2_kernels());
    k.matmul[type_index(TensorType::kQ80)] = matmul_q80_lanes<Vec512, Avx512VnniDot>;
    k.matmul_batch[type_index(TensorType::kQ80)] = matmul_q80_batch_lanes<Vec512, Avx512VnniDot>;
    k.matmul[type_index(TensorType::kQ8_0)] = matmul_ggml<Vec512, Avx512VnniDot, false>;
    k.matmul[type_index(TensorType::kQ4_0)] = matmul_ggml<Vec512, Avx512VnniDot, true>;
    k.matmul_batch[type_index(TensorType::kQ8_0)] = matmul_ggml_batch<Vec512, Avx512VnniDot, false>;
    k.matmul_batch[type_index(TensorType::kQ4_0)] = matmul_ggml_batch<Vec512, Avx512VnniDot, true>;
    k.matmul[type_index(TensorType::kIQ4_XS)] = matmul_iq4_xs_lanes<Vec512, Avx512VnniDot>;
    return k;
  }();
  return kAvx512Vnni;
}

}  // namespace pocketlm
