// When a run of float additions gives the same bits in every order. Top-p (sampling/topp.cpp)
// must add the nucleus in descending order as run.c does (`cumulative += prob`, rounded each
// time); this lets it skip ordering most of the nucleus. The softmax's sum (kernels' exp_sum)
// uses it to add a vector of terms without a chain of dependent additions.
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

// The grid of a running sum s in [2^e, 2^(e+1)): s = steps * step exactly, steps in
// [2^23, 2^24), step = u = 2^(e-23).
struct SumGrid {
  std::int32_t steps;
  float to_steps;  // 1 / u, exact
  float step;      // u

  // The grid of s; false where the argument does not hold: s not a normal float >= 2^-103
  // (zero, subnormal grid, too small for 1 / u to be a float, inf, NaN, negative).
  static bool of(float s, SumGrid* g) {
    const std::uint32_t bits = std::bit_cast<std::uint32_t>(s);
    const std::uint32_t e = bits >> 23;  // biased exponent; >= 256 when negative
    if (e < 24 || e > 254) return false;
    g->steps = static_cast<std::int32_t>((bits & 0x7fffffu) | 0x800000u);
    g->to_steps = std::bit_cast<float>((277u - e) << 23);  // 2^(150 - e)
    g->step = std::bit_cast<float>((e - 23u) << 23);       // 2^(e - 150)
    return true;
  }
  // steps * step: exact while steps < 2^24 (the sum is still in binade e).
  float value() const { return static_cast<float>(steps) * step; }

  // Below kFits grid steps (a < 2^22 u), a value cannot carry the sum past the binade on its own.
  static constexpr float kFits = 4194304.0f;
  static constexpr std::int32_t kEnd = 1 << 24;  // steps at 2^(e+1)
};

// Adds v[0..count) to *sum when every order of the additions gives the same float, and says
// whether it did (else *sum is unchanged). It does when *sum has a SumGrid, every value a is
// in [0, 2^22 u) and not a tie on the grid, and the total stays below 2^(e+1). V is float or
// the uint32 bits of floats (top-p sorts keys as bits).
template <class V>
bool add_order_free(float* sum, const V* v, int count) {
  SumGrid g;
  if (!SumGrid::of(*sum, &g)) return false;
  constexpr float kRound = 12582912.0f;  // 1.5 * 2^23: (q + it) - it = RNE(q) for 0 <= q < 2^22
  // Chunks of 256 keep the int32 total below 2^31 (256 * 2^22 = 2^30 beyond S < 2^24).
  for (int c = 0; c < count; c += 256) {
    const int end = count - c < 256 ? count : c + 256;
    std::int32_t chunk = 0;
    unsigned bad = 0;
    for (int i = c; i < end; ++i) {
      const float a = std::bit_cast<float>(v[i]);
      float q = a * g.to_steps;  // exact: a power-of-two scale of a value below the grid's top
      const bool fits = (q >= 0.0f) & (q < SumGrid::kFits);  // false for NaN, inf, negative, too large
      // Zeroed through its bits: a select on floats keeps GCC from vectorizing the loop.
      q = std::bit_cast<float>(std::bit_cast<std::uint32_t>(q) & (0u - static_cast<std::uint32_t>(fits)));
      const float r = (q + kRound) - kRound;
      const float d = q - r;  // exact; +-0.5 exactly on a tie
      bad |= static_cast<unsigned>(!fits) | static_cast<unsigned>(d == 0.5f) | static_cast<unsigned>(d == -0.5f);
      chunk += static_cast<std::int32_t>(r);
    }
    g.steps += chunk;
    if (bad || g.steps >= SumGrid::kEnd) return false;
  }
  *sum = g.value();  // still in binade e: exact
  return true;
}

}  // namespace pocketlm
