// Tokenizer::merge: run.c's merge loop ("merge the adjacent pair whose merged piece has the
// highest score, the leftmost on ties, until none merges") in O(n log n) instead of run.c's
// O(n^2) rescans, with the same result on every input.
//
// The symbols stay at their first index and form a doubly linked list; a merge keeps the left
// symbol (now the merged id) and unlinks the right one, so the list order of live symbols is
// their index order and "leftmost" is "smallest left index". A binary max-heap holds candidate
// merges keyed by (score desc, left index asc). Entries are never removed when a neighbour
// changes (lazy invalidation): a popped entry counts only when the pair now at its left index
// still looks up to its merged id, and then it is exactly the pair run.c's scan would pick,
// because every pair formed is pushed when it forms.
//
// Scratch (no allocation): `tokens` holds kEncodeWordsPerSlot words per slot (encode_capacity):
// [tokens | prev | next | heap], the heap 2 entries of 2 words (merged id, left index) per slot.
// Heap size bound: n - 1 first entries, each merge pops one and pushes at most two, and there
// are at most n - 1 merges, so at most 2 (n - 1) entries are ever held at once.
#include "pocketlm/text/tokenizer.h"

namespace pocketlm {

namespace {

// Merges below this score never happen: run.c's scan starts from best_score = -1e10 and takes
// only a strictly greater score (which also leaves out NaN).
constexpr float kNoMergeScore = -1e10f;

struct MergeHeap {
  std::int32_t* words;  // entry k: words[2k] = merged id, words[2k + 1] = left index
  const float* scores;
  std::size_t size = 0;

  // Whether entry a is taken before entry b: higher score, then the smaller left index.
  bool before(std::size_t a, std::size_t b) const {
    const float sa = scores[words[2 * a]], sb = scores[words[2 * b]];
    if (sa != sb) return sa > sb;
    return words[2 * a + 1] < words[2 * b + 1];
  }
  void swap(std::size_t a, std::size_t b) {
    const std::int32_t id = words[2 * a], left = words[2 * a + 1];
    words[2 * a] = words[2 * b];
    words[2 * a + 1] = words[2 * b + 1];
    words[2 * b] = id;
    words[2 * b + 1] = left;
  }
  void push(std::int32_t id, std::int32_t left) {
    std::size_t k = size++;
    words[2 * k] = id;
    words[2 * k + 1] = left;
    while (k > 0 && before(k, (k - 1) / 2)) {
      swap(k, (k - 1) / 2);
      k = (k - 1) / 2;
    }
  }
  void pop(std::int32_t* id, std::int32_t* left) {
    *id = words[0];
    *left = words[1];
    --size;
    if (size == 0) return;
    words[0] = words[2 * size];
    words[1] = words[2 * size + 1];
    for (std::size_t k = 0;;) {
      const std::size_t l = 2 * k + 1, r = l + 1;
      std::size_t best = k;
      if (l < size && before(l, best)) best = l;
      if (r < size && before(r, best)) best = r;
      if (best == k) return;
      swap(k, best);
      k = best;
    }
  }
};

}  // namespace

int Tokenizer::pair_id(std::int32_t left, std::int32_t right) const {
  const Piece a = piece(left), b = piece(right);
  return lookup_pair(a.data, a.size, b.data, b.size);
}

std::size_t Tokenizer::merge(std::int32_t* tokens, std::size_t n, std::size_t slots) const {
  if (n < 2) return n;
  std::int32_t* prev = tokens + slots;
  std::int32_t* next = prev + slots;
  MergeHeap heap{next + slots, scores_};
  const auto last = static_cast<std::int32_t>(n - 1);
  for (std::int32_t i = 0; i <= last; ++i) {
    prev[i] = i - 1;
    next[i] = i < last ? i + 1 : -1;
  }
  // A pair (i, next[i]) that merges into a piece above kNoMergeScore becomes a candidate.
  auto offer = [&](std::int32_t i) {
    if (next[i] < 0) return;
    const int id = pair_id(tokens[i], tokens[next[i]]);
    if (id >= 0 && scores_[id] > kNoMergeScore) heap.push(id, i);
  };
  for (std::int32_t i = 0; i < last; ++i) offer(i);
  while (heap.size > 0) {
    std::int32_t id = 0, left = 0;
    heap.pop(&id, &left);
    // A merged-away symbol is -1; its entries and those of pairs that changed are stale.
    const std::int32_t right = tokens[left] >= 0 ? next[left] : -1;
    if (right < 0 || pair_id(tokens[left], tokens[right]) != id) continue;
    tokens[left] = id;
    tokens[right] = -1;
    next[left] = next[right];
    if (next[right] >= 0) prev[next[right]] = left;
    if (prev[left] >= 0) offer(prev[left]);
    offer(left);
  }
  // Symbol 0 is never a right half, so the list starts there; live symbols move down in order.
  std::size_t out = 0;
  for (std::int32_t i = 0; i >= 0; i = next[i]) tokens[out++] = tokens[i];
  return out;
}

}  // namespace pocketlm
