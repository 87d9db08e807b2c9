// q8_0 groups as llama2.c's runq.c uses them: a tensor is flattened, cut into groups of
// `group_size` consecutive values, and each group stores int8 values q with one fp32 scale s;
// value = q * s. Activations are quantized on the fly per group (scale = max|x| / 127,
// q = round-half-away-from-zero(x / scale)); exported weights use round-half-to-even
// (numpy's rounding in llama2.c's export.py).
#pragma once

#include <cstdint>

namespace pocketlm {

// Quantizes n activations (n a multiple of group_size) into q[n] and s[n / group_size],
// exactly as runq.c's quantize(). An all-zero group gets scale 0 and zeros (runq.c would
// divide 0 by 0 and cast NaN to int8 — undefined behaviour; on x86 it also yields 0).
// A NaN activation (hostile weights) becomes 0, again what x86 yields for runq.c's cast,
// and a value past ±127 (only possible with a subnormal scale) is clamped: both casts would
// be undefined behaviour, and every kernel relies on q in [-127, 127].
void quantize_q80_activations(const float* x, int n, int group_size, std::int8_t* q, float* s);

// The int8 of a rounded activation: NaN → 0, clamped to [-127, 127]; finite values in range
// are cast unchanged (found by fuzz/fuzz_checkpoint: a NaN cast to int8 under UBSan).
inline std::int8_t clamp_q80(float rounded) {
  if (rounded != rounded) return 0;
  if (rounded > 127.0f) return 127;
  if (rounded < -127.0f) return -127;
  return static_cast<std::int8_t>(rounded);
}
// The same for the int32 a SIMD float→int conversion gives (INT32_MIN for NaN, as cvttps).
inline std::int8_t clamp_q80_int(std::int32_t v) {
  if (v == INT32_MIN) return 0;
  return static_cast<std::int8_t>(v > 127 ? 127 : v < -127 ? -127 : v);
}

// Dequantizes n values that start on a group boundary: out[i] = q[i] * s[i / group_size],
// as runq.c's dequantize() (one embedding row per token, so the table stays int8).
void dequantize_q80(const std::int8_t* q, const float* s, int n, int group_size, float* out);

// Quantizes n exported weights (n a multiple of group_size) like llama2.c's export.py
// quantize_q80: scale = max|w| / 127.0f, q = round-half-to-even(w / scale), all in float32.
// An all-zero group gets scale 0 and zeros. Returns the largest |w - q * scale| seen.
float quantize_q80_weights(const float* w, std::uint64_t n, int group_size, std::int8_t* q, float* s);

}  // namespace pocketlm
