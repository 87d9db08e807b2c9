// The cortex_m4 backend: tiled4 with its integer matmuls (q80, Q8_0, Q4_0) on the Cortex-M4's
// DSP instructions (ACLE, arm_acle.h), bit-identical to `reference`. SXTB16 sign-extends bytes
// 0 and 2 of a word into two int16 lanes (bytes 1 and 3 with the operand rotated by 8, which
// SXTB16 does in the same instruction), UXTB16 zero-extends them, and SMLAD adds both lanes'
// int16 x int16 products to an int32: two multiply-adds per instruction. The group and block
// sums are int32 and exact in any order, so pairing the products this way changes no bit; the
// float accumulation across groups and blocks is tiled4's (the reference's order and rounding).
// Weights use tiled4's layouts (q80 row-major, 4 rows sharing each activation; Q8_0 and Q4_0
// interleaved by 4 rows with 4 bytes of a row side by side), so plans are the same. fp32,
// attention and the rest are tiled4's. Built for Arm targets with the DSP extension
// (__ARM_FEATURE_DSP: Cortex-M4, M7, M33 with DSP); the default there (kernels/registry.cpp).
#include <arm_acle.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "pocketlm/kernels/interleave4_ggml.h"
#include "pocketlm/kernels/kernels.h"
#include "pocketlm/kernels/reference.h"

#if !defined(__ARM_FEATURE_DSP)
#error "kernels/cortex_m4.cpp needs the Arm DSP extension (-mcpu=cortex-m4)"
#endif

namespace pocketlm {

const Kernels& tiled4_kernels();

namespace {

constexpr int kLanes = interleave4::kLanes;

// Four bytes as one word (weights and activations are not word-aligned in general; the M4's
// LDR takes unaligned addresses, and memcpy compiles to it).
inline std::uint32_t load_word(const void* p) {
  std::uint32_t w;
  std::memcpy(&w, p, sizeof w);
  return w;
}

// Bytes 1 and 3 moved to lanes 0 and 2 (SXTB16/UXTB16 take it as their rotate operand).
inline std::uint32_t ror8(std::uint32_t w) { return (w >> 8) | (w << 24); }

// Four int8 activations as two int16 pairs: (x0, x2) and (x1, x3).
struct Pairs {
  int16x2_t even, odd;
};
inline Pairs signed_pairs(std::uint32_t w) { return {__sxtb16(w), __sxtb16(ror8(w))}; }

// s + w0*x0 + w1*x1 + w2*x2 + w3*x3 for four int8 weights in `w` against the pairs of x.
inline std::int32_t dot4_signed(std::int32_t s, std::uint32_t w, const Pairs& x) {
  s = __smlad(__sxtb16(w), x.even, s);
  return __smlad(__sxtb16(ror8(w)), x.odd, s);
}

// The same for four bytes 0..15 (Q4_0 nibbles, already masked).
inline std::int32_t dot4_unsigned(std::int32_t s, std::uint32_t w, const Pairs& x) {
  s = __smlad(__uxtb16(w), x.even, s);
  return __smlad(__uxtb16(ror8(w)), x.odd, s);
}

// ---- q80 (llama2.c's runq.c format) ----

// Rows [0, rows) (a multiple of 4) of a row-major q80 matrix with group size gs (a multiple of
// 4): per 4 rows and group, the 4 int32 sums share each word of activations; then
// acc = acc + ((float)isum * w_scale) * x_scale per row, groups in order (runq.c's).
void matmul_q80_quads(float* out, const std::int8_t* xq, const float* xs, const std::int8_t* wq, const float* ws,
                      int n, int rows, int gs) {
  const std::size_t sn = static_cast<std::size_t>(n);
  const std::size_t sgs = static_cast<std::size_t>(gs);
  const int groups = n / gs;  // runq.c's `j <= n - gs`: a partial last group is skipped
  for (int r = 0; r < rows; r += kLanes) {
    const std::int8_t* w0 = wq + static_cast<std::size_t>(r) * sn;
    const float* wsr[kLanes];
    for (int k = 0; k < kLanes; ++k) wsr[k] = ws + (static_cast<std::size_t>(r + k) * sn) / sgs;
    float acc[kLanes] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (int g = 0; g < groups; ++g) {
      const std::size_t j0 = static_cast<std::size_t>(g) * sgs;
      std::int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
      for (std::size_t j = j0; j < j0 + sgs; j += 4) {
        const Pairs x = signed_pairs(load_word(xq + j));
        s0 = dot4_signed(s0, load_word(w0 + j), x);
        s1 = dot4_signed(s1, load_word(w0 + sn + j), x);
        s2 = dot4_signed(s2, load_word(w0 + 2 * sn + j), x);
        s3 = dot4_signed(s3, load_word(w0 + 3 * sn + j), x);
      }
      const float x_scale = xs[g];
      acc[0] = acc[0] + (static_cast<float>(s0) * wsr[0][g]) * x_scale;
      acc[1] = acc[1] + (static_cast<float>(s1) * wsr[1][g]) * x_scale;
      acc[2] = acc[2] + (static_cast<float>(s2) * wsr[2][g]) * x_scale;
      acc[3] = acc[3] + (static_cast<float>(s3) * wsr[3][g]) * x_scale;
    }
    for (int k = 0; k < kLanes; ++k) out[r + k] = acc[k];
  }
}

void matmul_q80(float* out, const Matrix& w, const Activation& x, int rows) {
  const auto* xq = static_cast<const std::int8_t*>(x.values);
  const auto* wq = static_cast<const std::int8_t*>(w.values);
  const int n = w.cols, gs = w.group;
  if (gs % 4 != 0 || n / gs == 0) {  // not whole words (or no whole group): tiled4's loops
    tiled4_kernels().matmul[type_index(TensorType::kQ80)](out, w, x, rows);
    return;
  }
  const int full = rows / kLanes * kLanes;
  matmul_q80_quads(out, xq, x.scales, wq, w.scales, n, full, gs);
  if (full < rows) {  // n is a multiple of gs (kernels.h), so the tail's scales start at full * n / gs
    const std::size_t off = static_cast<std::size_t>(full) * static_cast<std::size_t>(n);
    reference::matmul_q80(out + full, xq, x.scales, wq + off, w.scales + off / static_cast<std::size_t>(gs), n,
                          rows - full, gs);
  }
}

// ---- Q8_0 and Q4_0 (GGUF), tiled4's 4-row interleave (kernels/interleave4_ggml.h) ----

// The 4 rows' int32 sums of one block: the activations paired once (16 words of int16 pairs)
// and shared by the rows; a row's 4 bytes of a group are one word.
template <bool kQ4>
void block_sums(std::int32_t* isum, const unsigned char* q, const std::int8_t* xq) {
  constexpr int kGroups = kQ4 ? 4 : 8;  // words of one row in a block
  Pairs x[8];                           // activations 4t .. 4t+3 for t < 8
  for (int t = 0; t < 8; ++t) x[t] = signed_pairs(load_word(xq + 4 * t));
  for (int t = 0; t < kGroups; ++t) {
    const unsigned char* v = q + 16 * t;  // 4 rows x 4 bytes
    for (int k = 0; k < kLanes; ++k) {
      const std::uint32_t word = load_word(v + 4 * k);
      if constexpr (kQ4) {
        // Low nibbles are values 4t..4t+3 of the block, high nibbles 16+4t..16+4t+3.
        isum[k] = dot4_unsigned(isum[k], word & 0x0F0F0F0Fu, x[t]);
        isum[k] = dot4_unsigned(isum[k], (word >> 4) & 0x0F0F0F0Fu, x[4 + t]);
      } else {
        isum[k] = dot4_signed(isum[k], word, x[t]);
      }
    }
  }
}

template <bool kQ4>
constexpr MatmulFn matmul_ggml = interleave4::matmul_interleaved4<kQ4, interleave4::matmul_rows4<kQ4, block_sums<kQ4>>>;

}  // namespace

const Kernels& cortex_m4_kernels() {
  static const Kernels kCortexM4 = [] {
    Kernels k = tiled4_kernels();
    k.name = "cortex_m4";
    k.matmul[type_index(TensorType::kQ80)] = matmul_q80;
    k.matmul[type_index(TensorType::kQ8_0)] = matmul_ggml<false>;
    k.matmul[type_index(TensorType::kQ4_0)] = matmul_ggml<true>;
    return k;
  }();
  return kCortexM4;
}

}  // namespace pocketlm
