#include "pocketlm/quant/iq4_xs.h"

#include <cmath>
#include <cstring>

#include "pocketlm/quant/fp16.h"

namespace pocketlm {

namespace {

constexpr int kSubBlocks = kIQ4_XSBlock / kIQ4_XSSubBlock;
constexpr int kCandidates = 16;

// The values v of the candidate scales m / v: the grid points of magnitude >= 49 and the
// midpoints of neighbouring ones (smaller |v| would put the largest value inside the grid).
constexpr float kCandidateValues[kCandidates] = {-127.0f, -115.5f, -104.0f, -93.5f, -83.0f, -74.0f, -65.0f, -57.0f,
                                                 -49.0f,  53.0f,   61.0f,   69.0f,  79.0f,  89.0f,  101.0f, 113.0f};

// The grid index nearest t (the lower one on a tie): the count of midpoints below t, by
// binary search over the 15 midpoints between neighbouring grid values.
int nearest(float t) {
  static constexpr float kMid[15] = {-115.5f, -93.5f, -74.0f, -57.0f, -42.0f, -28.5f, -16.0f, -4.5f,
                                     7.0f,    19.0f,  31.5f,  45.5f,  61.0f,  79.0f,  101.0f};
  int lo = 0, hi = 16;
  while (hi - lo > 1) {
    const int mid = (lo + hi) / 2;
    if (kMid[mid - 1] < t)
      lo = mid;
    else
      hi = mid;
  }
  return lo;
}

// Step 1 of the header's rule: the least-squares scale of the best candidate for 32 values.
float sub_block_scale(const float* x) {
  float m = 0.0f, amax = 0.0f;
  for (int i = 0; i < kIQ4_XSSubBlock; ++i)
    if (std::fabs(x[i]) > amax) {
      amax = std::fabs(x[i]);
      m = x[i];
    }
  if (amax == 0.0f) return 0.0f;
  float best_score = -1.0f, best_scale = 0.0f;
  for (float v : kCandidateValues) {
    const float inv = v / m;  // 1 / (m / v)
    float sxg = 0.0f, sgg = 0.0f;
    for (int i = 0; i < kIQ4_XSSubBlock; ++i) {
      const auto g = static_cast<float>(kIQ4NLValues[nearest(x[i] * inv)]);
      sxg += x[i] * g;
      sgg += g * g;
    }
    // Squared error at the least-squares scale is sum(x^2) - sxg^2 / sgg: the largest
    // sxg^2 / sgg is the smallest error (sgg > 0: no grid value is 0).
    const float score = sxg * sxg / sgg;
    if (score > best_score) {
      best_score = score;
      best_scale = sxg / sgg;
    }
  }
  return best_scale;
}

// round(v) half away from zero, clamped to [-32, 31] before any conversion (NaN -> 0).
int clamp_scale(float v) {
  if (!(v > -32.0f)) return v != v ? 0 : -32;
  if (v >= 31.0f) return 31;
  const float r = v < 0.0f ? -std::floor(-v + 0.5f) : std::floor(v + 0.5f);
  return static_cast<int>(r);
}

void quantize_block(const float* x, unsigned char* block) {
  float scales[kSubBlocks];
  float big = 0.0f, amax = 0.0f;
  for (int ib = 0; ib < kSubBlocks; ++ib) {
    scales[ib] = sub_block_scale(x + ib * kIQ4_XSSubBlock);
    if (std::fabs(scales[ib]) > amax) {
      amax = std::fabs(scales[ib]);
      big = scales[ib];
    }
  }
  // All zeros: +0 (big / -32 would store -0).
  const std::uint16_t dh = big != 0.0f ? fp32_to_fp16(big / -32.0f) : 0;
  const float d = fp16_to_fp32(dh);
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  std::memset(block, 0, kIQ4_XSBlockBytes);
  store_fp16(block, dh);
  unsigned scales_h = 0;
  for (int ib = 0; ib < kSubBlocks; ++ib) {
    const int l = clamp_scale(scales[ib] * id);
    const auto ls = static_cast<unsigned>(l + 32);
    block[4 + ib / 2] = static_cast<unsigned char>(block[4 + ib / 2] | (ls & 0x0Fu) << (4 * (ib % 2)));
    scales_h |= (ls >> 4) << (2 * ib);
    // Step 3: the decoder's dl, so that each value goes to the point nearest what it decodes.
    const float dl = d * static_cast<float>(l);
    const float* xs = x + ib * kIQ4_XSSubBlock;
    unsigned char* qs = block + kIQ4_XSScaleBytes + 16 * ib;
    for (int j = 0; j < 16; ++j) {
      // dl == 0 decodes every value to 0; nibble 8 (grid value 1) keeps the bytes canonical.
      const int lo = dl != 0.0f ? nearest(xs[j] / dl) : 8;
      const int hi = dl != 0.0f ? nearest(xs[j + 16] / dl) : 8;
      qs[j] = static_cast<unsigned char>(lo | hi << 4);
    }
  }
  block[2] = static_cast<unsigned char>(scales_h & 0xFFu);
  block[3] = static_cast<unsigned char>(scales_h >> 8);
}

}  // namespace

void quantize_iq4_xs(const float* x, std::size_t n, void* out) {
  auto* block = static_cast<unsigned char*>(out);
  for (std::size_t b = 0; b < n / kIQ4_XSBlock; ++b, block += kIQ4_XSBlockBytes)
    quantize_block(x + b * kIQ4_XSBlock, block);
}

void dequantize_iq4_xs(const void* blocks, std::size_t n, float* out) {
  const auto* block = static_cast<const unsigned char*>(blocks);
  for (std::size_t b = 0; b < n / kIQ4_XSBlock; ++b, block += kIQ4_XSBlockBytes) {
    const float d = fp16_to_fp32(load_fp16(block));
    for (int ib = 0; ib < kSubBlocks; ++ib) {
      const float dl = d * static_cast<float>(iq4_xs_scale(block, ib) - 32);
      const unsigned char* qs = block + kIQ4_XSScaleBytes + 16 * ib;
      float* o = out + b * kIQ4_XSBlock + static_cast<std::size_t>(ib) * kIQ4_XSSubBlock;
      for (int j = 0; j < 16; ++j) {
        o[j] = dl * static_cast<float>(kIQ4NLValues[qs[j] & 0x0F]);
        o[j + 16] = dl * static_cast<float>(kIQ4NLValues[qs[j] >> 4]);
      }
    }
  }
}

}  // namespace pocketlm
