// The AVX-512 backend (x86-64 with AVX-512F/BW), bit-identical to `reference`: avx2's table
// with the fp32, F16, q80, Q8_0 and Q4_0 matmuls on 16 lanes of 64-byte vectors
// (kernels/x86_float.h, x86_q80.h and x86_ggml.h over kernels/x86_vec512.h; each lane one
// output row in the reference's order). This file's int8 sums use vpmaddubsw/vpmaddwd; on a CPU
// with AVX512_VNNI, kernels/avx512vnni.cpp replaces them with vpdpbusd. Attention, quantization
// and sampling are avx2's (the vector widths there do not bound decode); exp, softmax and SwiGLU
// are avx2's with expf 16 lanes wide (x86_expf.h), which the avx2 table itself does not use.
// Compiled with -mavx512f -mavx512bw -mavx512vl -mf16c; selected when the CPU reports
// AVX-512F and BW (kernels/registry.cpp).
#include <immintrin.h>

#include "pocketlm/kernels/kernels.h"
#include "pocketlm/kernels/x86_expf.h"
#include "pocketlm/kernels/x86_vec512.h"

namespace pocketlm {

const Kernels& avx2_kernels();                          // kernels/avx2.cpp
void set_exp_slots(Kernels& k, x86::ExpWidth width);  // kernels/avx2.cpp

namespace {

// acc + the int32 sums of 4 adjacent products u[i] * s[i]: vpmaddubsw to int16 pairs (callers
// keep them below 2^15), vpmaddwd to int32.
struct Avx512MaddubsDot {
  // int8_add is w * x itself: vpmaddubsw's int16 pairs would saturate on (w + 128) * x.
  static constexpr bool kBiased = false;
  static inline __m512i add(__m512i acc, __m512i u, __m512i s) {
    return _mm512_add_epi32(acc, _mm512_madd_epi16(_mm512_maddubs_epi16(u, s), _mm512_set1_epi16(1)));
  }
  // w * x for signed bytes as |w| * (x negated where w < 0): exact for every int8 w while
  // |x| <= 127 (AVX-512 has no vpsignb; a byte mask does it).
  static inline __m512i int8_add(__m512i acc, __m512i w, __m512i x) {
    const __mmask64 negative = _mm512_movepi8_mask(w);
    return add(acc, _mm512_abs_epi8(w), _mm512_mask_sub_epi8(x, negative, _mm512_setzero_si512(), x));
  }
  // IQ4_XS (x86_ggml.h): |x| * (g negated where x < 0), ax = |x|; the pairs stay below 2^15.
  static inline __m512i grid_add(__m512i acc, __m512i g, __m512i x, __m512i ax) {
    return add(acc, ax, _mm512_mask_sub_epi8(g, _mm512_movepi8_mask(x), _mm512_setzero_si512(), g));
  }
  static inline __m512i add_small(__m512i acc, __m512i u, __m512i s) {
    return _mm512_add_epi16(acc, _mm512_maddubs_epi16(u, s));
  }
  static inline __m512i widen_small(__m512i acc) { return _mm512_madd_epi16(acc, _mm512_set1_epi16(1)); }
};

}  // namespace

// The table with these int8 kernels over `base` (avx2's or avxvnni's non-matmul slots).
Kernels avx512_table(const Kernels& base) {
  Kernels k = base;
  k.name = "avx512";
  set_exp_slots(k, x86::ExpWidth::k512);
  k.matmul[type_index(TensorType::kF32)] = matmul_f32_entry<matmul_f32_lanes<Vec512>>;
  k.interleave[type_index(TensorType::kF32)] = fixed_interleave<Vec512::kLanes>;
  k.matmul[type_index(TensorType::kF16)] = matmul_f16_lanes<Vec512>;
  k.interleave[type_index(TensorType::kF16)] = fixed_interleave<Vec512::kLanes>;
  k.matmul[type_index(TensorType::kQ80)] = matmul_q80_lanes<Vec512, Avx512MaddubsDot>;
  k.matmul_batch[type_index(TensorType::kQ80)] = matmul_q80_batch_lanes<Vec512, Avx512MaddubsDot>;
  k.interleave[type_index(TensorType::kQ80)] = q80_interleave_lanes<Vec512>;
  k.matmul[type_index(TensorType::kQ8_0)] = matmul_ggml<Vec512, Avx512MaddubsDot, false>;
  k.matmul[type_index(TensorType::kQ4_0)] = matmul_ggml<Vec512, Avx512MaddubsDot, true>;
  k.matmul_batch[type_index(TensorType::kQ8_0)] = matmul_ggml_batch<Vec512, Avx512MaddubsDot, false>;
  k.matmul_batch[type_index(TensorType::kQ4_0)] = matmul_ggml_batch<Vec512, Avx512MaddubsDot, true>;
  k.interleave[type_index(TensorType::kQ8_0)] = fixed_interleave<Vec512::kLanes>;
  k.interleave[type_index(TensorType::kQ4_0)] = fixed_interleave<Vec512::kLanes>;
  k.matmul[type_index(TensorType::kIQ4_XS)] = matmul_iq4_xs_lanes<Vec512, Avx512MaddubsDot>;
  k.interleave[type_index(TensorType::kIQ4_XS)] = fixed_interleave<Vec512::kLanes>;
  return k;
}

const Kernels& avx512_kernels() {
  static const Kernels kAvx512 = avx512_table(avx2_kernels());
  return kAvx512;
}

}  // namespace pocketlm
