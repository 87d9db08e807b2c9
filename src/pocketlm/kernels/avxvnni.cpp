// The AVX-VNNI backend (x86-64): the avx2 backend with its int8 matmuls (q80, Q8_0, Q4_0,
// single token and batched prefill) on vpdpbusd, which multiplies unsigned by signed bytes and
// adds each group of 4 products straight into an int32 lane: one instruction where AVX2 needs
// three (vpmaddubsw, vpmaddwd, vpaddd). It does not saturate, and the group sums are exact
// integers in any order, so the results are the bits of `reference` (kernels/x86_q80.h,
// x86_ggml.h over kernels/x86_vec256.h).
// Everything else (fp32, f16, attention, quantization) is avx2's. Compiled with -mavx2 -mf16c
// -mavxvnni; selected when the CPU reports AVX-VNNI too (kernels/registry.cpp): Intel Alder
// Lake and Sapphire Rapids onwards, AMD Zen 5.
#include <immintrin.h>

#include "pocketlm/kernels/kernels.h"
#include "pocketlm/kernels/x86_vec256.h"

namespace pocketlm {

const Kernels& avx2_kernels();  // kernels/avx2.cpp

namespace {

// AVX-VNNI's (VEX) vpdpbusd adds each group of 4 products u[i] * s[i] (u unsigned, s signed
// bytes) straight into an int32 lane, without saturating.
struct VnniDot {
  static inline __m256i add(__m256i acc, __m256i u, __m256i s) { return _mm256_dpbusd_avx_epi32(acc, u, s); }
  // acc + the sums of 4 products (w + 128) * x: w's bytes with the top bit flipped are w + 128,
  // unsigned. The caller removes 128 * (the activations' sum).
  static constexpr bool kBiased = true;
  static inline __m256i int8_add(__m256i acc, __m256i w, __m256i x) {
    return add(acc, _mm256_xor_si256(w, _mm256_set1_epi8(static_cast<char>(0x80))), x);
  }
  // IQ4_XS (x86_ggml.h): g is already the grid value + 128; |x| is not needed.
  static inline __m256i grid_add(__m256i acc, __m256i g, __m256i x, __m256i) { return add(acc, g, x); }
  // Small sums (avx2's int16 shortcut): here already int32.
  static inline __m256i add_small(__m256i acc, __m256i u, __m256i s) { return add(acc, u, s); }
  static inline __m256i widen_small(__m256i acc) { return acc; }
};

}  // namespace

const Kernels& avxvnni_kernels() {
  static const Kernels kAvxVnni = [] {
    Kernels k = avx2_kernels();  // same layouts (interleave), same non-int8 kernels
    k.name = "avxvnni";
    k.matmul[type_index(TensorType::kQ80)] = matmul_q80_lanes<Vec256, VnniDot>;
    k.matmul_batch[type_index(TensorType::kQ80)] = matmul_q80_batch_lanes<Vec256, VnniDot>;
    k.matmul[type_index(TensorType::kQ8_0)] = matmul_ggml<Vec256, VnniDot, false>;
    k.matmul[type_index(TensorType::kQ4_0)] = matmul_ggml<Vec256, VnniDot, true>;
    k.matmul_batch[type_index(TensorType::kQ8_0)] = matmul_ggml_batch<Vec256, VnniDot, false>;
    k.matmul_batch[type_index(TensorType::kQ4_0)] = matmul_ggml_batch<Vec256, VnniDot, true>;
    k.matmul[type_index(TensorType::kIQ4_XS)] = matmul_iq4_xs_lanes<Vec256, VnniDot>;
    return k;
  }();
  return kAvxVnni;
}

}  // namespace pocketlm
