#include "pocketlm/sampling/topp.h"

#include <bit>
#include <cstring>

#include "pocketlm/sampling/sampler.h"
#include "pocketlm/sampling/scan.h"

namespace pocketlm {
namespace {

inline std::uint32_t bits_of(float f) { return std::bit_cast<std::uint32_t>(f); }
inline float float_of(std::uint32_t u) { return std::bit_cast<float>(u); }

// Widest digit for n keys. 9 bits: 512 counters per digit stay in L1 beside the scatter
// targets, and a flat distribution's ~25-bit key range takes 3 passes. From kWideDigitKeys
// keys on, 13 bits take it in 2: measured at 32,000 keys (bench/sampler_bench.cpp,
// BM_ToppOnly/0) the pass saved is about 10 % of the sample, for 58 KiB more counters, which
// a small vocabulary would not repay.
int max_digit_bits(int n) { return n >= kWideDigitKeys ? 13 : 9; }

// The fewest digits of <= max_bits bits covering `range`, all equally wide so that no digit
// is nearly constant (a constant digit costs a pass for nothing, and a nearly constant one
// makes each counter increment wait for the previous one).
struct Digits {
  int passes;  // 0 when range is 0
  int bits;
};
Digits digits_for(std::uint32_t range, int max_bits) {
  const int width = std::bit_width(range);
  const int passes = (width + max_bits - 1) / max_bits;
  return Digits{passes, passes ? (width + passes - 1) / passes : 0};
}

// One stable counting-sort pass of src[n] into dst by the digit (base - key) >> shift;
// offsets holds the digit's histogram and is turned into write positions. With kCountNext
// the pass also builds the histogram of the following digit (next_shift) in `next`, so
// that no separate counting pass over the keys is needed.
template <bool kCountNext>
void scatter(const std::uint32_t* src, std::uint32_t* dst, int n, std::uint32_t base, std::uint32_t mask,
             int shift, std::uint32_t* offsets, int buckets, std::uint32_t* next, int next_shift) {
  std::uint32_t sum = 0;
  for (int b = 0; b < buckets; ++b) {
    const std::uint32_t c = offsets[b];
    offsets[b] = sum;
    sum += c;
  }
  for (int i = 0; i < n; ++i) {
    const std::uint32_t k = src[i];
    const std::uint32_t d = base - k;
    dst[offsets[(d >> shift) & mask]++] = k;
    if constexpr (kCountNext) ++next[(d >> next_shift) & mask];
  }
}

}  // namespace

std::uint64_t topp_scratch_bytes(int n) {
  return (2 * static_cast<std::uint64_t>(n) + topp_count_slots(n)) * sizeof(std::uint32_t);
}

ToppScratch topp_scratch_at(void* memory, int n) {
  std::uint32_t* base = static_cast<std::uint32_t*>(memory);
  return ToppScratch{base, base + n, base + 2 * static_cast<std::size_t>(n)};
}

int sample_topp(const float* probs, int n, float topp, const ToppScratch& scratch, float coin) {
  if (!(topp > 0.0f && topp < 1.0f)) return sample_mult(probs, n, coin);
  // run.c: (1.0f - topp) / (n - 1), the int converted to float. Positive for n >= 2 (1 - topp
  // >= 2^-24), +inf for n == 1. Candidates are therefore positive or +inf, never NaN, and
  // their uint32 bits order like their values.
  const float cutoff = (1.0f - topp) / static_cast<float>(n - 1);
  const float largest = max_ignoring_nan(probs, n);
  if (!(largest >= cutoff)) return sample_argmax(probs, n);  // no candidate: run.c reads before its array

  // Sorting max_key - key ascending sorts the candidates by probability, descending; every
  // candidate key lies in [cutoff_key, max_key], which fixes the digits before the filter.
  const std::uint32_t max_key = bits_of(largest);
  const Digits dg = digits_for(max_key - bits_of(cutoff), max_digit_bits(n));
  const int buckets = 1 << dg.bits;
  const std::uint32_t mask = static_cast<std::uint32_t>(buckets - 1);
  std::uint32_t* counts = scratch.counts;
  // (At least one slot: with no digit to sort, the first-digit count still writes slot 0.)
  std::memset(counts, 0, sizeof(std::uint32_t) * static_cast<std::size_t>(dg.passes ? dg.passes * buckets : 1));

  // Filter, branch-free (a branch on `>= cutoff` mispredicts constantly on peaked
  // distributions): every key is written, only candidates advance n0 (n0 <= i keeps the
  // write in bounds). Then the first digit's histogram over the candidates only.
  std::uint32_t* keys = scratch.keys;
  int n0 = 0;
  for (int i = 0; i < n; ++i) {
    keys[n0] = bits_of(probs[i]);
    n0 += probs[i] >= cutoff;
  }
  for (int i = 0; i < n0; ++i) ++counts[(max_key - keys[i]) & mask];

  // Least-significant digit first; stable passes, so the keys end in descending order. Equal
  // keys are equal probabilities, interchangeable here; their ids are ordered at the end.
  std::uint32_t* src = keys;
  std::uint32_t* dst = scratch.spare;
  for (int q = 0; q < dg.passes; ++q) {
    std::uint32_t* offsets = counts + q * buckets;
    const int shift = q * dg.bits;
    const bool last_digit = q + 1 == dg.passes;
    std::uint32_t* next = last_digit ? nullptr : offsets + buckets;
    if (offsets[((max_key - src[0]) >> shift) & mask] == static_cast<std::uint32_t>(n0)) {
      // One bucket holds every key: already in order by this digit; only count the next.
      for (int i = 0; next && i < n0; ++i) ++next[((max_key - src[i]) >> (shift + dg.bits)) & mask];
      continue;
    }
    if (last_digit)
      scatter<false>(src, dst, n0, max_key, mask, shift, offsets, buckets, nullptr, 0);
    else
      scatter<true>(src, dst, n0, max_key, mask, shift, offsets, buckets, next, shift + dg.bits);
    std::uint32_t* t = src;
    src = dst;
    dst = t;
  }
  const std::uint32_t* sorted = src;
  std::uint32_t* sums = dst;  // the other buffer receives the running sums (as bits)

  // run.c's first walk: accumulate until the sum exceeds topp; `last` ends the nucleus.
  float cumulative = 0.0f;
  int last = n0 - 1;
  for (int i = 0; i < n0; ++i) {
    cumulative += float_of(sorted[i]);
    sums[i] = bits_of(cumulative);
    if (cumulative > topp) {
      last = i;
      break;
    }
  }
  // run.c's second walk recomputes the same running sums (same additions, same order) and
  // returns the first token whose sum exceeds r, else the last one. The sums never
  // decrease, so "r < sum" is false then true along the walk: a binary search finds the
  // same position (and `last` when it never holds, e.g. r is NaN from 0 * inf).
  const float r = coin * cumulative;
  int lo = 0, hi = last;
  while (lo < hi) {
    const int mid = lo + (hi - lo) / 2;
    if (r < float_of(sums[mid]))
      hi = mid;
    else
      lo = mid + 1;
  }
  // Position lo holds a probability value; run.c's sort puts equal values in id order, so
  // the token is the rank-th id (in id order) carrying exactly that value.
  const std::uint32_t value = sorted[lo];
  int rank = 0;
  while (lo - rank > 0 && sorted[lo - rank - 1] == value) ++rank;
  for (int i = 0; i < n; ++i)
    if (bits_of(probs[i]) == value && rank-- == 0) return i;
  return sample_argmax(probs, n);  // not reached: every sorted key came from probs
}

}  // namespace pocketlm
