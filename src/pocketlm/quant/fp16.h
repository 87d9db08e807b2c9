// IEEE 754 binary16 ("half", ggml's fp16) <-> binary32, in portable integer code: the same
// bits on every target (the PSP's FPU has no half type; x86's F16C, AArch64's FCVT and the
// Cortex-M4F's VCVTB, which kernels/cortex_m4.cpp uses for block scales, give these very
// results, round-to-nearest-even with subnormals kept).
// GGUF stores F16 tensors and the per-block scales of Q8_0 and Q4_0 in this format.
#pragma once

#include <cstdint>
#include <cstring>

namespace pocketlm {

// Exact: every half is a float. NaNs keep their payload with the quiet bit set, as F16C does.
inline float fp16_to_fp32(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exp = (h >> 10) & 0x1Fu;
  std::uint32_t man = h & 0x3FFu;
  std::uint32_t bits;
  if (exp == 0) {
    if (man == 0) {
      bits = sign;
    } else {  // subnormal: man * 2^-24, renormalised
      int e = -14;
      while ((man & 0x400u) == 0) {
        man <<= 1;
        --e;
      }
      bits = sign | (static_cast<std::uint32_t>(e + 127) << 23) | ((man & 0x3FFu) << 13);
    }
  } else if (exp == 31) {
    bits = sign | 0x7F800000u | (man << 13) | (man ? 0x400000u : 0u);
  } else {
    bits = sign | ((exp + 112u) << 23) | (man << 13);
  }
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// Round to nearest, ties to even; overflow gives infinity, NaN stays NaN (quiet).
inline std::uint16_t fp32_to_fp16(float f) {
  std::uint32_t x;
  std::memcpy(&x, &f, sizeof x);
  const auto sign = static_cast<std::uint16_t>((x >> 16) & 0x8000u);
  const std::uint32_t abs = x & 0x7FFFFFFFu;
  if (abs >= 0x7F800000u)  // inf or NaN
    return static_cast<std::uint16_t>(sign | 0x7C00u | (abs > 0x7F800000u ? 0x200u | ((abs >> 13) & 0x3FFu) : 0u));
  if (abs >= 0x477FF000u) return static_cast<std::uint16_t>(sign | 0x7C00u);  // >= 65520: rounds to inf
  if (abs < 0x38800000u) {                                                    // below 2^-14: subnormal half
    if (abs <= 0x33000000u) return sign;                                       // <= 2^-25: rounds to 0
    const std::uint32_t e = abs >> 23;
    const std::uint32_t m = (abs & 0x7FFFFFu) | 0x800000u;
    const std::uint32_t shift = 126u - e;  // 14..24
    std::uint32_t k = m >> shift;
    const std::uint32_t rem = m & ((1u << shift) - 1u), half = 1u << (shift - 1u);
    if (rem > half || (rem == half && (k & 1u))) ++k;
    return static_cast<std::uint16_t>(sign | k);
  }
  std::uint32_t h = ((abs >> 23) - 112u) << 10 | ((abs >> 13) & 0x3FFu);
  const std::uint32_t rem = abs & 0x1FFFu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;  // a carry moves into the exponent correctly
  return static_cast<std::uint16_t>(sign | h);
}

// A little-endian half at p (ggml blocks are packed: no alignment).
inline std::uint16_t load_fp16(const void* p) {
  const auto* b = static_cast<const unsigned char*>(p);
  return static_cast<std::uint16_t>(b[0] | (b[1] << 8));
}
inline void store_fp16(void* p, std::uint16_t h) {
  auto* b = static_cast<unsigned char*>(p);
  b[0] = static_cast<unsigned char>(h & 0xFF);
  b[1] = static_cast<unsigned char>(h >> 8);
}

}  // namespace pocketlm
