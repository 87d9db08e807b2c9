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
#include "pocketlm/quant/fp16.h"
#include "pocketlm/quant/q4_0.h"
#include "pocketlm/quant/q8_0.h"

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

// Bytes 1 and 3 of a word extended into two 16-bit lanes: SXTB16/UXTB16 with their rotate
// operand (ROR #8), one instruction (GCC does not fold a separate rotate into the ACLE
// intrinsic's operand).
inline int16x2_t sxtb16_odd(std::uint32_t w) {
  int16x2_t r;
  __asm__("sxtb16 %0, %1, ror #8" : "=r"(r) : "r"(w));
  return r;
}
inline uint16x2_t uxtb16_odd(std::uint32_t w) {
  uint16x2_t r;
  __asm__("uxtb16 %0, %1, ror #8" : "=r"(r) : "r"(w));
  return r;
}

// Q4_0's low nibbles of 4 bytes.
constexpr std::uint32_t kLow4 = 0x0F0F0F0Fu;

// Four int8 activations as two int16 pairs: (x0, x2) and (x1, x3).
struct Pairs {
  int16x2_t even, odd;
};
inline Pairs signed_pairs(std::uint32_t w) { return {__sxtb16(w), sxtb16_odd(w)}; }

// s + w0*x0 + w1*x1 + w2*x2 + w3*x3 for four int8 weights in `w` against the pairs of x.
inline std::int32_t dot4_signed(std::int32_t s, std::uint32_t w, const Pairs& x) {
  s = __smlad(__sxtb16(w), x.even, s);
  return __smlad(sxtb16_odd(w), x.odd, s);
}

// The same for four bytes 0..15 (Q4_0 nibbles, already masked).
inline std::int32_t dot4_unsigned(std::int32_t s, std::uint32_t w, const Pairs& x) {
  s = __smlad(__uxtb16(w), x.even, s);
  return __smlad(static_cast<int16x2_t>(uxtb16_odd(w)), x.odd, s);
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

// An fp16 block scale to float with the FPU's own conversion (VCVTB.F32.F16: FPv4-SP has it):
// exact for every half, as fp16_to_fp32 is (a NaN keeps its payload, quieted; the scales are
// checked finite at load). Two instructions instead of the portable routine's dozen.
inline float half_to_float(const unsigned char* p) {
  const std::uint32_t bits = load_fp16(p);
  float f;
  __asm__("vmov %0, %1\n\tvcvtb.f32.f16 %0, %0" : "=t"(f) : "r"(bits));
  return f;
}

// Rows [0, full) of the 4-row interleave, per 4 rows and block: the activations paired once (8
// words as 16 int16 pairs) and shared by the rows, a row's 4 bytes of a group one word; for Q4_0
// the nibbles' offset of 8 taken off once per block, as 8 * sum(x) from the same pairs (SMLAD
// against (1, 1)); then each row's acc = acc + (float)(isum - correction) * (d_w * d_x), blocks
// in order: the reference's arithmetic (interleave4::matmul_rows4), the integer sums exact in any
// order.
template <bool kQ4>
void matmul_rows4(float* out, const unsigned char* w, const unsigned char* xb, int n, int full) {
  constexpr std::size_t kBs = kQ4 ? kQ4_0BlockBytes : kQ8_0BlockBytes;
  constexpr int kGroups = kQ4 ? 4 : 8;  // words of one row in a block
  const int nb = n / 32;
  const std::size_t row_bytes = static_cast<std::size_t>(nb) * kBs;
  for (int r = 0; r < full; r += kLanes) {
    const unsigned char* chunk = w + static_cast<std::size_t>(r) * row_bytes;
    float acc0 = 0.0f, acc1 = 0.0f, acc2 = 0.0f, acc3 = 0.0f;
    for (int b = 0; b < nb; ++b, chunk += kLanes * kBs) {
      const unsigned char* xblk = xb + static_cast<std::size_t>(b) * kQ8_0BlockBytes;
      const auto* xq = reinterpret_cast<const std::int8_t*>(xblk + 2);
      // Per group t: the activations' pairs for values 4t..4t+3 (and, for Q4_0, 16+4t..), made
      // where they are used so that they stay in registers (all 8 at once would spill).
      constexpr std::uint32_t kOnes = 0x00010001u;  // (1, 1): SMLAD adds both lanes
      std::int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0, sum = 0;
      const unsigned char* q = chunk + 2 * kLanes;
      for (int t = 0; t < kGroups; ++t, q += 16) {
        const std::uint32_t w0 = load_word(q), w1 = load_word(q + 4), w2 = load_word(q + 8), w3 = load_word(q + 12);
        const Pairs lo = signed_pairs(load_word(xq + 4 * t));
        if constexpr (kQ4) {
          // Low nibbles are values 4t..4t+3 of the block, high nibbles 16+4t..16+4t+3; the sum
          // of the activations (for the nibbles' offset) from the same pairs.
          const Pairs hi = signed_pairs(load_word(xq + 16 + 4 * t));
          sum = __smlad(hi.odd, kOnes, __smlad(hi.even, kOnes, __smlad(lo.odd, kOnes, __smlad(lo.even, kOnes, sum))));
          s0 = dot4_unsigned(dot4_unsigned(s0, w0 & kLow4, lo), (w0 >> 4) & kLow4, hi);
          s1 = dot4_unsigned(dot4_unsigned(s1, w1 & kLow4, lo), (w1 >> 4) & kLow4, hi);
          s2 = dot4_unsigned(dot4_unsigned(s2, w2 & kLow4, lo), (w2 >> 4) & kLow4, hi);
          s3 = dot4_unsigned(dot4_unsigned(s3, w3 & kLow4, lo), (w3 >> 4) & kLow4, hi);
        } else {
          s0 = dot4_signed(s0, w0, lo);
          s1 = dot4_signed(s1, w1, lo);
          s2 = dot4_signed(s2, w2, lo);
          s3 = dot4_signed(s3, w3, lo);
        }
      }
      const std::int32_t correction = kQ4 ? 8 * sum : 0;
      const float dx = half_to_float(xblk);
      acc0 = acc0 + static_cast<float>(s0 - correction) * (half_to_float(chunk) * dx);
      acc1 = acc1 + static_cast<float>(s1 - correction) * (half_to_float(chunk + 2) * dx);
      acc2 = acc2 + static_cast<float>(s2 - correction) * (half_to_float(chunk + 4) * dx);
      acc3 = acc3 + static_cast<float>(s3 - correction) * (half_to_float(chunk + 6) * dx);
    }
    out[r] = acc0;
    out[r + 1] = acc1;
    out[r + 2] = acc2;
    out[r + 3] = acc3;
  }
}

template <bool kQ4>
constexpr MatmulFn matmul_ggml = interleave4::matmul_interleaved4<kQ4, matmul_rows4<kQ4>>;

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
