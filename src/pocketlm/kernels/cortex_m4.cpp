// The cortex_m4 backend: tiled4 with its integer matmuls (q80, Q8_0, Q4_0) on the Cortex-M4's
// DSP instructions (ACLE, arm_acle.h), bit-identical to `reference`. SXTB16 sign-extends bytes
// 0 and 2 of a word into two int16 lanes (bytes 1 and 3 with the operand rotated by 8, which
// SXTB16 does in the same instruction), Q4_0's nibbles become int16 lanes with one AND each,
// and SMLAD adds both lanes' int16 x int16 products to an int32: two multiply-adds per
// instruction. The group and block
// sums are int32 and exact in any order, so pairing the products this way changes no bit; the
// float accumulation across groups and blocks is tiled4's (the reference's order and rounding).
// Weights use tiled4's layouts (q80, Q8_0 and Q4_0 interleaved by 4 rows with 4 bytes of a row
// side by side; q80 row-major where its group size is not whole words). fp32, attention and
// the rest are tiled4's. Built for Arm targets with the DSP extension
// (__ARM_FEATURE_DSP: Cortex-M4, M7, M33 with DSP); the default there (kernels/registry.cpp).
#include <arm_acle.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "pocketlm/kernels/interleave4_ggml.h"
#include "pocketlm/kernels/q80_quad.h"
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

// Bytes 1 and 3 of a word sign-extended into two 16-bit lanes: SXTB16 with its rotate
// operand (ROR #8), one instruction (GCC does not fold a separate rotate into the ACLE
// intrinsic's operand).
inline int16x2_t sxtb16_odd(std::uint32_t w) {
  int16x2_t r;
  __asm__("sxtb16 %0, %1, ror #8" : "=r"(r) : "r"(w));
  return r;
}

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

// ---- q80 (llama2.c's runq.c format) ----

// q80 interleaved by 4 rows as tiled4 has it (quant/q80_interleave.h, il = 4): per group, chunks
// of 16 bytes holding a word of each of the 4 rows, and the 4 rows' scales side by side, so one
// pointer walks the values and one the scales (row-major, GCC ran out of registers for the 4
// rows' scale pointers and spilled them every group).

// Rows [0, full) of a q80 matrix interleaved by 4, group size gs (a multiple of 4): per 4 rows
// and group, the 4 int32 sums share each word of activations; then acc = acc + ((float)isum *
// w_scale) * x_scale per row, groups in order (runq.c's).
void matmul_q80_quads(float* out, const std::int8_t* xq, const float* xs, const std::int8_t* wq, const float* ws,
                      int n, int full, int gs) {
  const int groups = n / gs;
  const std::int8_t* w = wq;
  const float* sw = ws;
  for (int r = 0; r < full; r += kLanes) {
    const std::int8_t* x = xq;
    Q80Quad acc;
    for (int g = 0; g < groups; ++g, sw += kLanes) {
      std::int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
      for (int j = 0; j < gs; j += 4, x += 4, w += 4 * kLanes) {
        const Pairs xp = signed_pairs(load_word(x));
        s0 = dot4_signed(s0, load_word(w), xp);
        s1 = dot4_signed(s1, load_word(w + 4), xp);
        s2 = dot4_signed(s2, load_word(w + 8), xp);
        s3 = dot4_signed(s3, load_word(w + 12), xp);
      }
      acc.add(s0, s1, s2, s3, sw, xs[g]);
    }
    acc.store(out + r);
  }
}

// The same for group size 4 (stories260K's): a group is one chunk, its 4 int32 sums one SMUAD
// and one SMLAD a row, written out (23 instructions for the 16 multiply-adds).
void matmul_q80_quads_gs4(float* out, const std::int8_t* xq, const float* xs, const std::int8_t* wq, const float* ws,
                          int n, int full) {
  const int groups = n / 4;
  const std::int8_t* w = wq;
  const float* sw = ws;
  for (int r = 0; r < full; r += kLanes) {
    const std::int8_t* x = xq;
    Q80Quad acc;
    for (int g = 0; g < groups; ++g, sw += kLanes) {
      std::int32_t i0, i1, i2, i3;
      std::uint32_t xe, xo, t, u;
#define POCKETLM_Q80_ROW(I, ADDR)                  \
  "ldr %[t], " ADDR "\n\t"                          \
  "sxtb16 %[u], %[t]\n\t"                          \
  "smuad %[" I "], %[u], %[xe]\n\t"                \
  "sxtb16 %[u], %[t], ror #8\n\t"                  \
  "smlad %[" I "], %[u], %[xo], %[" I "]\n\t"
      __asm__(
          "ldr %[xe], [%[x]], #4\n\t"
          "sxtb16 %[xo], %[xe], ror #8\n\t"
          "sxtb16 %[xe], %[xe]\n\t"  //
          POCKETLM_Q80_ROW("i1", "[%[w], #4]") POCKETLM_Q80_ROW("i2", "[%[w], #8]")
              POCKETLM_Q80_ROW("i3", "[%[w], #12]") POCKETLM_Q80_ROW("i0", "[%[w]], #16")
          : [i0] "=&r"(i0), [i1] "=&r"(i1), [i2] "=&r"(i2), [i3] "=&r"(i3), [xe] "=&r"(xe), [xo] "=&r"(xo),
            [t] "=&r"(t), [u] "=&r"(u), [w] "+r"(w), [x] "+r"(x)
          :
          : "memory");
#undef POCKETLM_Q80_ROW
      acc.add(i0, i1, i2, i3, sw, xs[g]);
    }
    acc.store(out + r);
  }
}

void matmul_q80(float* out, const Matrix& w, const Activation& x, int rows) {
  const auto* xq = static_cast<const std::int8_t*>(x.values);
  const auto* wq = static_cast<const std::int8_t*>(w.values);
  const int n = w.cols, gs = w.group;
  if (w.interleave != kLanes || n / gs == 0) {  // row-major (gs not whole words) or no whole group
    tiled4_kernels().matmul[type_index(TensorType::kQ80)](out, w, x, rows);
    return;
  }
  const int full = rows / kLanes * kLanes;
  if (gs == 4)
    matmul_q80_quads_gs4(out, xq, x.scales, wq, w.scales, n, full);
  else
    matmul_q80_quads(out, xq, x.scales, wq, w.scales, n, full, gs);
  reference::matmul_q80_tail(out, w, x, full, rows);
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

// Rows [0, full) of Q8_0's 4-row interleave, per 4 rows and block: the activations paired once
// per group (a word as two int16 pairs) and shared by the 4 rows, a row's 4 bytes of a group one
// word; then each row's acc = acc + (float)isum * (d_w * d_x), blocks in order: the reference's
// arithmetic (interleave4::matmul_rows4), the integer sums exact in any order.
void matmul_q8_0_rows4(float* out, const unsigned char* w, const unsigned char* xb, int n, int full) {
  const int nb = n / 32;
  const std::size_t row_bytes = static_cast<std::size_t>(nb) * kQ8_0BlockBytes;
  for (int r = 0; r < full; r += kLanes) {
    const unsigned char* chunk = w + static_cast<std::size_t>(r) * row_bytes;
    float acc0 = 0.0f, acc1 = 0.0f, acc2 = 0.0f, acc3 = 0.0f;
    for (int b = 0; b < nb; ++b, chunk += kLanes * kQ8_0BlockBytes) {
      const unsigned char* xblk = xb + static_cast<std::size_t>(b) * kQ8_0BlockBytes;
      const auto* xq = reinterpret_cast<const std::int8_t*>(xblk + 2);
      std::int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
      const unsigned char* q = chunk + 2 * kLanes;
      for (int t = 0; t < 8; ++t, q += 16) {
        const Pairs x = signed_pairs(load_word(xq + 4 * t));
        s0 = dot4_signed(s0, load_word(q), x);
        s1 = dot4_signed(s1, load_word(q + 4), x);
        s2 = dot4_signed(s2, load_word(q + 8), x);
        s3 = dot4_signed(s3, load_word(q + 12), x);
      }
      const float dx = half_to_float(xblk);
      acc0 = acc0 + static_cast<float>(s0) * (half_to_float(chunk) * dx);
      acc1 = acc1 + static_cast<float>(s1) * (half_to_float(chunk + 2) * dx);
      acc2 = acc2 + static_cast<float>(s2) * (half_to_float(chunk + 4) * dx);
      acc3 = acc3 + static_cast<float>(s3) * (half_to_float(chunk + 6) * dx);
    }
    out[r] = acc0;
    out[r + 1] = acc1;
    out[r + 2] = acc2;
    out[r + 3] = acc3;
  }
}

// Q4_0's nibbles as int16 lanes straight from the stored word, one AND each: byte i of a row's
// group word holds value i (low nibble) and value 16 + i (high nibble), so with M = 0x000F000F
//   w & M = (v0, v2),  (w >> 8) & M = (v1, v3),  (w >> 4) & M = (v16, v18),  (w >> 12) & M = (v17, v19)
// pair with the activations' (x0, x2), (x1, x3), (x16, x18), (x17, x19): 8 multiply-adds in 4 SMLAD
// and 4 ANDs with the shift folded into the AND's operand.
constexpr std::uint32_t kNibbleLanes = 0x000F000Fu;

// One group of 4 rows: s[k] += row k's 8 values of the group (its word at q + 4k) x the group's
// activation pairs at `x` ((x0, x2), (x1, x3), (x16, x18), (x17, x19), made once per matmul);
// q moves on by the group's 16 bytes, x by its 16. 38 instructions for 32 multiply-adds, written
// out because GCC prefers a separate shift to an AND with a shifted operand and, left to
// schedule the block, hoists and spills.
inline void group4_q4_0(std::int32_t& s0, std::int32_t& s1, std::int32_t& s2, std::int32_t& s3,
                        const unsigned char*& q, const std::uint32_t*& x, std::uint32_t m) {
  std::uint32_t le, lo, he, ho, w, t;
#define POCKETLM_Q4_ROW(S)                        \
  "ldr %[w], [%[q]], #4\n\t"                       \
  "and %[t], %[m], %[w]\n\t"                      \
  "smlad %[" S "], %[t], %[le], %[" S "]\n\t"     \
  "and %[t], %[m], %[w], lsr #8\n\t"              \
  "smlad %[" S "], %[t], %[lo], %[" S "]\n\t"     \
  "and %[t], %[m], %[w], lsr #4\n\t"              \
  "smlad %[" S "], %[t], %[he], %[" S "]\n\t"     \
  "and %[t], %[m], %[w], lsr #12\n\t"             \
  "smlad %[" S "], %[t], %[ho], %[" S "]\n\t"
  __asm__(
      "ldrd %[le], %[lo], [%[x]], #8\n\t"
      "ldrd %[he], %[ho], [%[x]], #8\n\t"  //
      POCKETLM_Q4_ROW("s0") POCKETLM_Q4_ROW("s1") POCKETLM_Q4_ROW("s2") POCKETLM_Q4_ROW("s3")
      : [s0] "+r"(s0), [s1] "+r"(s1), [s2] "+r"(s2), [s3] "+r"(s3), [q] "+r"(q), [x] "+r"(x), [le] "=&r"(le),
        [lo] "=&r"(lo), [he] "=&r"(he), [ho] "=&r"(ho), [w] "=&r"(w), [t] "=&r"(t)
      : [m] "r"(m)
      : "memory");
#undef POCKETLM_Q4_ROW
}

// The 4 rows' fp16 scales of a block (4 halves at p) as floats: two words, each moved to the FPU
// once and converted from its bottom and top half (VCVTB/VCVTT), 8 instructions for 12.
inline void scales4(const unsigned char* p, float& d0, float& d1, float& d2, float& d3) {
  const std::uint32_t a = load_word(p), b = load_word(p + 4);
  float ha, hb;
  __asm__(
      "vmov %[ha], %[a]\n\t"
      "vmov %[hb], %[b]\n\t"
      "vcvtb.f32.f16 %[d0], %[ha]\n\t"
      "vcvtt.f32.f16 %[d1], %[ha]\n\t"
      "vcvtb.f32.f16 %[d2], %[hb]\n\t"
      "vcvtt.f32.f16 %[d3], %[hb]"
      : [d0] "=&t"(d0), [d1] "=&t"(d1), [d2] "=&t"(d2), [d3] "=&t"(d3), [ha] "=&t"(ha), [hb] "=&t"(hb)
      : [a] "r"(a), [b] "r"(b));
}

// Blocks whose activation terms are made before the rows, per pass: each block's 16 pair words,
// its 8 * sum(x) (the nibbles' offset of 8, the same for every row) and its scale as a float
// (about 600 bytes of stack).
constexpr int kQ4BlocksAPass = 8;

// Rows [0, full) of Q4_0's 4-row interleave: per pass of up to kQ4BlocksAPass blocks, the
// activation blocks' pairs, offsets and scales once; then per 4 rows and block, the 4 exact int32
// sums (group4_q4_0), and acc = acc + (float)(isum - 8 * sum(x)) * (d_w * d_x) per row, blocks in
// order, as the reference does. A row's accumulators wait in `out` between passes.
void matmul_q4_0_rows4(float* out, const unsigned char* w, const unsigned char* xb, int n, int full) {
  const int nb = n / 32;
  const std::size_t row_bytes = static_cast<std::size_t>(nb) * kQ4_0BlockBytes;
  constexpr std::uint32_t kOnes = 0x00010001u;  // (1, 1): SMLAD adds both lanes
  alignas(8) std::uint32_t pairs[kQ4BlocksAPass * 16];
  std::int32_t correction[kQ4BlocksAPass];
  float dx[kQ4BlocksAPass];
  for (int b0 = 0; b0 < nb; b0 += kQ4BlocksAPass) {
    const int bn = nb - b0 < kQ4BlocksAPass ? nb - b0 : kQ4BlocksAPass;
    for (int b = 0; b < bn; ++b) {
      const unsigned char* xblk = xb + static_cast<std::size_t>(b0 + b) * kQ8_0BlockBytes;
      std::int32_t sum = 0;
      for (int t = 0; t < 4; ++t) {
        const Pairs lo = signed_pairs(load_word(xblk + 2 + 4 * t)), hi = signed_pairs(load_word(xblk + 18 + 4 * t));
        std::uint32_t* p = pairs + 16 * b + 4 * t;
        p[0] = static_cast<std::uint32_t>(lo.even);
        p[1] = static_cast<std::uint32_t>(lo.odd);
        p[2] = static_cast<std::uint32_t>(hi.even);
        p[3] = static_cast<std::uint32_t>(hi.odd);
        sum = __smlad(hi.odd, kOnes, __smlad(hi.even, kOnes, __smlad(lo.odd, kOnes, __smlad(lo.even, kOnes, sum))));
      }
      correction[b] = 8 * sum;
      dx[b] = half_to_float(xblk);
    }
    const std::uint32_t m = kNibbleLanes;
    for (int r = 0; r < full; r += kLanes) {
      const unsigned char* chunk =
          w + static_cast<std::size_t>(r) * row_bytes + static_cast<std::size_t>(b0) * kLanes * kQ4_0BlockBytes;
      float acc0 = 0.0f, acc1 = 0.0f, acc2 = 0.0f, acc3 = 0.0f;
      if (b0 > 0) acc0 = out[r], acc1 = out[r + 1], acc2 = out[r + 2], acc3 = out[r + 3];
      const std::uint32_t* x = pairs;
      for (int b = 0; b < bn; ++b, chunk += kLanes * kQ4_0BlockBytes) {
        const unsigned char* q = chunk + 2 * kLanes;
        std::int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
        for (int t = 0; t < 4; ++t) group4_q4_0(s0, s1, s2, s3, q, x, m);
        float d0, d1, d2, d3;
        scales4(chunk, d0, d1, d2, d3);
        const std::int32_t c = correction[b];
        const float db = dx[b];
        acc0 = acc0 + static_cast<float>(s0 - c) * (d0 * db);
        acc1 = acc1 + static_cast<float>(s1 - c) * (d1 * db);
        acc2 = acc2 + static_cast<float>(s2 - c) * (d2 * db);
        acc3 = acc3 + static_cast<float>(s3 - c) * (d3 * db);
      }
      out[r] = acc0;
      out[r + 1] = acc1;
      out[r + 2] = acc2;
      out[r + 3] = acc3;
    }
  }
}

constexpr MatmulFn matmul_q8_0 = interleave4::matmul_interleaved4<false, matmul_q8_0_rows4>;
constexpr MatmulFn matmul_q4_0 = interleave4::matmul_interleaved4<true, matmul_q4_0_rows4>;

}  // namespace

const Kernels& cortex_m4_kernels() {
  static const Kernels kCortexM4 = [] {
    Kernels k = tiled4_kernels();
    k.name = "cortex_m4";
    k.matmul[type_index(TensorType::kQ80)] = matmul_q80;
    k.matmul[type_index(TensorType::kQ8_0)] = matmul_q8_0;
    k.matmul[type_index(TensorType::kQ4_0)] = matmul_q4_0;
    return k;
  }();
  return kCortexM4;
}

}  // namespace pocketlm
