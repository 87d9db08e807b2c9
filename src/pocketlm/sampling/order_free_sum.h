// When a run of float additions gives the same bits in every order. Top-p (topp.cpp) must
// add the nucleus in descending order as run.c does (`cumulative += prob`, rounded each
// time); this lets it skip ordering most of the nucleus.
//
// Inside one binade [2^e, 2^(e+1)) floats are the multiples of u = 2^(e-23). While a running
// sum s = S u stays in its binade, s + a rounds to (S + RNE(a / u)) u, unless a / u lies
// exactly half way between two integers (then the even neighbour depends on S). So each
// addition adds an integer number of grid steps that depends on a alone, and integer sums do
// not depend on order: such a run can be added in any order, vectorized, and gives the bits
// of the sequential loop.
#pragma once

#include <bit>
#include <cstdint>

namespace pocketlm {

// Adds v[0..count) to *sum when every order of the additions gives the same float, and says
// whether it did (else *sum is unchanged). It does when *sum is a normal float >= 2^-103 in
// [2^e, 2^(e+1)), every value a is in [0, 2^22 u) and not a tie on the grid, and the total
// stays below 2^(e+1). V is float or the uint32 bits of floats (top-p sorts keys as bits).
template <class V>
bool add_order_free(float* sum, const V* v, int count) {
  const std::uint32_t s_bits = std::bit_cast<std::uint32_t>(*sum);
  const std::uint32_t e = s_bits >> 23;          // biased exponent; >= 256 when negative
  if (e < 24 || e > 254) return false;            // subnormal grid, tiny, inf/NaN or negative
  const std::int32_t s_steps = static_cast<std::int32_t>((s_bits & 0x7fffffu) | 0x800000u);  // S in [2^23, 2^24)
  const float to_steps = std::bit_cast<float>((277u - e) << 23);  // 1 / u = 2^(150 - e), exact
  const float step = std::bit_cast<float>((e - 23u) << 23);       // u = 2^(e - 150)
  constexpr float kFits = 4194304.0f;                              // 2^22: a / u below it
  constexpr float kRound = 12582912.0f;                            // 1.5 * 2^23: (q + it) - it = RNE(q)
  std::int32_t steps = s_steps;
  // Chunks of 256 keep the int32 total below 2^31 (256 * 2^22 = 2^30 beyond S < 2^24).
  for (int c = 0; c < count; c += 256) {
    const int end = count - c < 256 ? count : c + 256;
    std::int32_t chunk = 0;
    unsigned bad = 0;
    for (int i = c; i < end; ++i) {
      const float a = std::bit_cast<float>(v[i]);
      float q = a * to_steps;  // exact: a power-of-two scale of a value below the grid's top
      const bool fits = (q >= 0.0f) & (q < kFits);  // false for NaN, inf, negative, too large
      // Zeroed through its bits: a select on floats keeps GCC from vectorizing the loop.
      q = std::bit_cast<float>(std::bit_cast<std::uint32_t>(q) & (0u - static_cast<std::uint32_t>(fits)));
      const float r = (q + kRound) - kRound;
      const float d = q - r;  // exact; +-0.5 exactly on a tie
      bad |= static_cast<unsigned>(!fits) | static_cast<unsigned>(d == 0.5f) | static_cast<unsigned>(d == -0.5f);
      chunk += static_cast<std::int32_t>(r);
    }
    steps += chunk;
    if (bad || steps >= (1 << 24)) return false;
  }
  *sum = static_cast<float>(steps) * step;  // S' < 2^24: exact, and still in binade e
  return true;
}

}  // namespace pocketlm
