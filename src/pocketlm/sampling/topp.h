// Top-p ("nucleus") sampling with the exact semantics of llama2.c's run.c sample_topp()
// (Holtzman et al. 2019): keep the tokens whose probability is >= (1 - topp) / (n - 1),
// order them by probability, descending, ties by increasing token id (glibc's qsort is a
// stable merge sort and the candidates enter it in id order), sum them in that order until
// the running float sum exceeds topp, then pick the first kept token whose running sum
// exceeds coin * (that sum). The float sums depend on the order, so the order is exact.
#pragma once

#include <cstdint>

#include "pocketlm/kernels/kernels.h"

namespace pocketlm {

// Scratch of sample_topp over n probabilities; see topp_scratch_bytes().
// One buffer ends with the candidates' bits grouped by bucket, the other with running sums.
struct ToppScratch {
  std::uint32_t* keys = nullptr;    // [n] the candidates' probabilities as IEEE bits
  std::uint32_t* spare = nullptr;   // [n]
  std::uint32_t* counts = nullptr;  // [topp_count_slots(n)] bucket ends, then digit histograms
};

// Vocabularies from this size on are bucketed by 11-bit digits (topp.cpp), else by 9-bit ones.
inline constexpr int kWideDigitKeys = 16384;

// Histogram slots for n keys: the top digit's buckets (2^11 or 2^9), then the radix sort
// inside one bucket over the remaining bits (keys of positive floats differ in at most 31),
// room for 2 digits as wide as the top one; it narrows its digits where that is not enough.
inline constexpr int topp_count_slots(int n) { return n >= kWideDigitKeys ? 3 * 2048 : 3 * 512; }

// Bytes of scratch for n probabilities (8 n bytes + 6 KiB, + 24 KiB from kWideDigitKeys keys
// on), and its layout over `memory`, which must be 4-byte aligned and hold that many bytes.
std::uint64_t topp_scratch_bytes(int n);
ToppScratch topp_scratch_at(void* memory, int n);

// Samples a token id from probs[n] (n >= 1) with run.c's top-p rule, for 0 < topp < 1 and a
// coin in [0, 1). Returns an id in [0, n) for any input:
//  - no token reaches the cutoff (n == 1, or topp near 0 on a flat distribution): run.c
//    reads before its array there; here the answer is sample_argmax(probs, n);
//  - topp outside (0, 1) or NaN (run.c never calls top-p then): sample_mult(probs, n, coin);
//  - NaN probabilities are never candidates; +inf ones are, and sort first.
// Cost: a max pass and a filter pass over probs, one counting-sort pass grouping the
// candidates by their top digit (bucket), then the walks in chunks of >= 128 keys ending on a
// bucket's end. A chunk that adds to the same float in any order (order_free_sum.h) is summed
// at once, vectorized; only chunks where the running sum crosses a binade, topp or coin * sum
// are sorted inside their buckets and summed key by key. run.c sorts all n0 candidates with
// qsort, O(n0 log n0); ties are put in id order after the walk.
int sample_topp(const float* probs, int n, float topp, const ToppScratch& scratch, float coin);
// The same when the caller knows largest = max_ignoring_nan(probs, n) (the softmax returns it),
// saving a pass over probs, with a backend's candidate filter (Kernels::compact_at_least).
int sample_topp(const float* probs, int n, float topp, const ToppScratch& scratch, float coin, float largest,
                CompactFn compact);

// run.c's sample_topp() written out with a full comparison sort (std::sort on probability,
// then id: the order of run.c's stable qsort), two walks and no shortcut. The oracle that
// tests and the fuzzer compare sample_topp with. scratch: [n] pairs. O(n log n).
struct ProbIndex {
  float prob;
  int index;
};
int sample_topp_sorted(const float* probs, int n, float topp, ProbIndex* scratch, float coin);

}  // namespace pocketlm
