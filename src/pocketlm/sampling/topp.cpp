#include "pocketlm/sampling/topp.h"

#include <bit>
#include <cstring>

#include "pocketlm/base/order_free_sum.h"
#include "pocketlm/sampling/sampler.h"
#include "pocketlm/sampling/scan.h"

namespace pocketlm {
namespace {

inline std::uint32_t bits_of(float f) { return std::bit_cast<std::uint32_t>(f); }
inline float float_of(std::uint32_t u) { return std::bit_cast<float>(u); }

// Widest digit for n keys. 9 bits: 512 counters stay in L1 beside the scatter targets. From
// kWideDigitKeys keys on, 11: a 32,000-token distribution spreads over ~2,000 buckets of a
// dozen keys, and 2,048 counters (8 KiB) keep the histogram and scatter passes in L1
// (measured against 10, 12 and 13 bits: bench/sampler_bench.cpp, BM_ToppOnly/0).
int max_digit_bits(int n) { return n >= kWideDigitKeys ? 11 : 9; }

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
// offsets holds the digit's histogram and ends as each bucket's end. With kCountNext the
// pass also builds the histogram of the following digit (next_shift) in `next`, so that no
// separate counting pass over the keys is needed.
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

// Sorts keys[count] descending by the low `bits` bits of max_key - key (the keys of one
// bucket, which agree above them): insertion sort for a few keys, else a least-significant-
// digit radix sort through tmp[count] with histograms in counts[slots] (bits <= 22; slots
// >= 88, enough for 22 one-bit digits).
void sort_bucket(std::uint32_t* keys, std::uint32_t* tmp, int count, std::uint32_t max_key, int bits, int max_bits,
                 std::uint32_t* counts, int slots) {
  if (bits == 0 || count < 2) return;  // one key value
  if (count <= 16) {
    for (int i = 1; i < count; ++i) {
      const std::uint32_t k = keys[i];
      int j = i;
      for (; j > 0 && keys[j - 1] < k; --j) keys[j] = keys[j - 1];
      keys[j] = k;
    }
    return;
  }
  // Digits about as wide as log2(count) (a bucket of 100 keys should not clear and sum 2,048
  // counters per pass), and narrower still until their histograms fit in `slots`.
  const int count_bits = std::bit_width(static_cast<unsigned>(count));
  Digits dg = digits_for((1u << bits) - 1u, count_bits < max_bits ? count_bits : max_bits);
  while (dg.passes << dg.bits > slots) dg = digits_for((1u << bits) - 1u, dg.bits - 1);
  const int buckets = 1 << dg.bits;
  const std::uint32_t mask = static_cast<std::uint32_t>(buckets - 1);
  std::memset(counts, 0, sizeof(std::uint32_t) * static_cast<std::size_t>(dg.passes * buckets));
  for (int i = 0; i < count; ++i) ++counts[(max_key - keys[i]) & mask];
  std::uint32_t* src = keys;
  std::uint32_t* dst = tmp;
  for (int q = 0; q < dg.passes; ++q) {
    std::uint32_t* offsets = counts + q * buckets;
    const int shift = q * dg.bits;
    if (q + 1 == dg.passes)
      scatter<false>(src, dst, count, max_key, mask, shift, offsets, buckets, nullptr, 0);
    else
      scatter<true>(src, dst, count, max_key, mask, shift, offsets, buckets, offsets + buckets, shift + dg.bits);
    std::uint32_t* t = src;
    src = dst;
    dst = t;
  }
  if (src != keys) std::memcpy(keys, src, sizeof(std::uint32_t) * static_cast<std::size_t>(count));
}

// The candidates after one counting-sort pass by their top digit: bucket b (probabilities
// in one slice of the key range, b = 0 the largest) is keys[end[b - 1] .. end[b]), its keys
// in id order. The walks below take them in runs of whole buckets ("chunks").
struct Buckets {
  std::uint32_t* keys;  // [n0] grouped by bucket
  const std::uint32_t* end;
  std::uint32_t max_key;
  int shift;  // low bits below the top digit: the order inside a bucket
  int n0;
  int max_bits;
  std::uint32_t* sort_counts;  // histograms of sort_bucket
  int sort_slots;

  int bucket_of(int i) const { return static_cast<int>((max_key - keys[i]) >> shift); }
  // Chunks of at least kChunk keys (or to n0), ending at a bucket's end. Longer chunks cost
  // more where one must be sorted, shorter ones more calls (BM_ToppOnly/0: 67-70 us from 64
  // to 256, 77 us at 512).
  static constexpr int kChunk = 128;
  int chunk_end(int begin) const {
    const int p = n0 - begin > kChunk ? begin + kChunk - 1 : n0 - 1;
    return static_cast<int>(end[bucket_of(p)]);
  }
  // Puts keys[begin, stop) in descending order, a whole bucket at a time (the last one may
  // reach past stop), with tmp[begin, ..) as scratch.
  void sort_chunk(int begin, int stop, std::uint32_t* tmp) const {
    while (begin < stop) {
      const int e = static_cast<int>(end[bucket_of(begin)]);
      sort_bucket(keys + begin, tmp + begin, e - begin, max_key, shift, max_bits, sort_counts, sort_slots);
      begin = e;
    }
  }
};

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
  return sample_topp(probs, n, topp, scratch, coin, max_ignoring_nan(probs, n), reference_kernels().compact_at_least);
}

int sample_topp(const float* probs, int n, float topp, const ToppScratch& scratch, float coin, float largest,
                CompactFn compact) {
  if (!(topp > 0.0f && topp < 1.0f)) return sample_mult(probs, n, coin);
  // run.c: (1.0f - topp) / (n - 1), the int converted to float. Positive for n >= 2 (1 - topp
  // >= 2^-24), +inf for n == 1. Candidates are therefore positive or +inf, never NaN, and
  // their uint32 bits order like their values.
  const float cutoff = (1.0f - topp) / static_cast<float>(n - 1);
  if (!(largest >= cutoff)) return sample_argmax(probs, n);  // no candidate: run.c reads before its array

  // Every candidate key lies in [cutoff_key, max_key]; its top digit of max_key - key
  // (max_digit_bits wide at most) is its bucket, descending probabilities in ascending buckets.
  const std::uint32_t max_key = bits_of(largest);
  const int width = std::bit_width(max_key - bits_of(cutoff));
  const int max_bits = max_digit_bits(n);
  const int top_bits = width < max_bits ? width : max_bits;
  const int shift = width - top_bits;
  const int buckets = 1 << top_bits;
  std::uint32_t* counts = scratch.counts;
  std::memset(counts, 0, sizeof(std::uint32_t) * static_cast<std::size_t>(buckets));

  // The candidates' bits in id order (the backend's filter), then their bucket histogram.
  std::uint32_t* keys = scratch.keys;
  const int n0 = compact(probs, n, cutoff, keys);
  if (n0 == 0) return sample_argmax(probs, n);  // (only if `largest` was not probs' maximum)
  for (int i = 0; i < n0; ++i) ++counts[(max_key - keys[i]) >> shift];

  // One stable counting-sort pass groups the candidates by bucket (unless one bucket holds
  // them all: then counts[] already says where it ends). Sorting inside the buckets is left
  // to the walks, which need it only where the running sum leaves its binade or crosses a
  // threshold (order_free_sum.h).
  std::uint32_t* grouped = keys;
  std::uint32_t* sums = scratch.spare;  // the other buffer: running sums (as bits)
  if (counts[(max_key - keys[0]) >> shift] != static_cast<std::uint32_t>(n0)) {
    scatter<false>(keys, scratch.spare, n0, max_key, ~0u, shift, counts, buckets, nullptr, 0);
    grouped = scratch.spare;
    sums = keys;
  }
  const Buckets g{grouped, counts, max_key, shift, n0, max_bits, counts + buckets, topp_count_slots(n) - buckets};

  // run.c's first walk: accumulate in descending order until the sum exceeds topp; `last`
  // ends the nucleus. A chunk whose keys add to the same float in every order, without
  // passing topp, is added at once (its end's running sum recorded); any other chunk is
  // sorted and added key by key, every running sum recorded.
  float cumulative = 0.0f;
  int last = -1;
  for (int begin = 0; begin < n0 && last < 0;) {
    const int stop = g.chunk_end(begin);
    float s = cumulative;
    if (add_order_free(&s, grouped + begin, stop - begin) && !(s > topp)) {
      cumulative = s;
      sums[stop - 1] = bits_of(s);
      begin = stop;
      continue;
    }
    g.sort_chunk(begin, stop, sums);
    for (int i = begin; i < stop && last < 0; ++i) {
      cumulative += float_of(grouped[i]);
      sums[i] = bits_of(cumulative);
      if (cumulative > topp) last = i;
    }
    begin = stop;
  }
  if (last < 0) last = n0 - 1;  // the sum never exceeded topp

  // run.c's second walk recomputes the same running sums (same additions, same order) and
  // returns the first token whose sum exceeds r, else the last one. Chunk by chunk: the
  // chunk whose end sum first exceeds r holds the answer; it is sorted (sorting is
  // idempotent, if the first walk did already) and summed key by key from the sum before it.
  const float r = coin * cumulative;
  int pos = last;
  for (int begin = 0; begin <= last;) {
    int stop = g.chunk_end(begin);
    if (stop > last + 1) stop = last + 1;  // sums[] ends at `last`
    if (!(r < float_of(sums[stop - 1]))) {
      begin = stop;
      continue;
    }
    g.sort_chunk(begin, stop, sums);  // its running sums are recomputed below
    float cdf = begin > 0 ? float_of(sums[begin - 1]) : 0.0f;
    for (int i = begin; i < stop; ++i) {
      cdf += float_of(grouped[i]);
      if (r < cdf) {
        pos = i;
        break;
      }
    }
    break;
  }
  // Position pos holds a probability value; run.c's sort puts equal values in id order, so
  // the token is the rank-th id (in id order) carrying exactly that value. Equal values
  // share a bucket, and pos's bucket is sorted.
  const std::uint32_t value = grouped[pos];
  int rank = 0;
  while (pos - rank > 0 && grouped[pos - rank - 1] == value) ++rank;
  // Blocks of 64: a branch-free count of the value per block (it vectorizes) skips the blocks
  // before the one holding the rank-th id.
  constexpr int kBlock = 64;
  for (int b = 0; b < n; b += kBlock) {
    const int e = n - b < kBlock ? n : b + kBlock;
    int hits = 0;
    for (int i = b; i < e; ++i) hits += bits_of(probs[i]) == value;
    if (hits <= rank) {
      rank -= hits;
      continue;
    }
    for (int i = b; i < e; ++i)
      if (bits_of(probs[i]) == value && rank-- == 0) return i;
  }
  return sample_argmax(probs, n);  // not reached: every grouped key came from probs
}

}  // namespace pocketlm
