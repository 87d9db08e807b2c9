// Top-p ("nucleus") sampling with the exact semantics of llama2.c's run.c sample_topp()
// (Holtzman et al. 2019): keep the tokens whose probability is >= (1 - topp) / (n - 1),
// order them by probability, descending, ties by increasing token id (glibc's qsort is a
// stable merge sort and the candidates enter it in id order), sum them in that order until
// the running float sum exceeds topp, then pick the first kept token whose running sum
// exceeds coin * (that sum). The float sums depend on the order, so the order is exact.
#pragma once

#include <cstdint>

namespace pocketlm {

// Scratch of sample_topp over n probabilities; see topp_scratch_bytes().
// keys and spare ping-pong through the radix passes; one ends with the sorted candidates'
// bits, the other with their running sums.
struct ToppScratch {
  std::uint32_t* keys = nullptr;    // [n] the candidates' probabilities as IEEE bits
  std::uint32_t* spare = nullptr;   // [n]
  std::uint32_t* counts = nullptr;  // [topp_count_slots(n)] digit histograms
};

// Vocabularies from this size on sort with digits of up to 13 bits (topp.cpp), else 9.
inline constexpr int kWideDigitKeys = 16384;

// Histogram slots for n keys: keys of positive floats differ in at most 31 bits, so the radix
// sort uses 1 or 2 digits of at most 13 bits or 3 of at most 11 (wide digits), else up to 3
// digits of 9 bits or 4 of 8.
inline constexpr int topp_count_slots(int n) { return n >= kWideDigitKeys ? 2 * 8192 : 3 * 512; }

// Bytes of scratch for n probabilities (8 n + 6 KiB, or + 64 KiB from kWideDigitKeys keys on), and its layout over `memory`, which
// must be 4-byte aligned and hold topp_scratch_bytes(n) bytes.
std::uint64_t topp_scratch_bytes(int n);
ToppScratch topp_scratch_at(void* memory, int n);

// Samples a token id from probs[n] (n >= 1) with run.c's top-p rule, for 0 < topp < 1 and a
// coin in [0, 1). Returns an id in [0, n) for any input:
//  - no token reaches the cutoff (n == 1, or topp near 0 on a flat distribution): run.c
//    reads before its array there; here the answer is sample_argmax(probs, n);
//  - topp outside (0, 1) or NaN (run.c never calls top-p then): sample_mult(probs, n, coin);
//  - NaN probabilities are never candidates; +inf ones are, and sort first.
// Cost: a max pass and a filter pass over probs, then a least-significant-digit radix sort
// of the candidates' bits (positive floats order like their uint32 bits), at most 4
// counting-sort passes over them (3 on a flat 32,000-token distribution), instead of
// run.c's O(n0 log n0) comparison sort; ties are put in id order after the walk.
int sample_topp(const float* probs, int n, float topp, const ToppScratch& scratch, float coin);

// run.c's sample_topp() written out with a full comparison sort (std::sort on probability,
// then id: the order of run.c's stable qsort), two walks and no shortcut. The oracle that
// tests and the fuzzer compare sample_topp with. scratch: [n] pairs. O(n log n).
struct ProbIndex {
  float prob;
  int index;
};
int sample_topp_sorted(const float* probs, int n, float topp, ProbIndex* scratch, float coin);

}  // namespace pocketlm
