// The AVX2 backend (x86-64), bit-identical to `reference`:
// - matmuls (fp32, F16, q80, Q8_0, Q4_0, IQ4_XS; q80, Q8_0 and Q4_0 batched for prefill): the
//   kernels written once for this width and avx512's (kernels/x86_float.h, x86_q80.h, x86_ggml.h over Vec256,
//   kernels/x86_vec256.h), each lane one output row, their int8 sums through MaddubsDot (below);
//   avxvnni shares them with its own Dot; IQ4_XS's grid through a byte lookup (x86_ggml.h).
// - attention: scores 8 positions at a time, values 8 dimensions at a time (see below); its
//   softmax through the exp_sum slot.
// - exp, exp_sum: glibc's __expf_fma 8 floats at a time when it gives this libm's bits, the
//   softmax's sum in vector steps where order cannot change it (x86_expf.h); set_exp_slots
//   gives avx512's tables the same slots 16 floats at a time.
// - compact_at_least (top-p's filter): a compare, a permutation from a 256-entry table and one
//   store per 8 values.
// Compiled with -mavx2 -mf16c (fp16 scales and weights); selected when the CPU reports both
// (kernels/registry.cpp).
#include <immintrin.h>

#include <climits>
#include <cmath>
#include <cstring>

#include "pocketlm/kernels/batch.h"
#include "pocketlm/kernels/reference.h"
#include "pocketlm/kernels/x86_expf.h"
#include "pocketlm/kernels/x86_vec256.h"
#include "pocketlm/quant/fp16.h"
#include "pocketlm/quant/q4_0.h"
#include "pocketlm/quant/q8_0.h"
#include "pocketlm/quant/q80.h"

namespace pocketlm {

namespace {

constexpr int kLanes = Vec256::kLanes;

// Transposes an 8x8 tile of floats held as 8 rows (attention's key tiles).
inline void transpose8(__m256 r[8]) {
  const __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
  const __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
  const __m256 t4 = _mm256_unpacklo_ps(r[4], r[5]), t5 = _mm256_unpackhi_ps(r[4], r[5]);
  const __m256 t6 = _mm256_unpacklo_ps(r[6], r[7]), t7 = _mm256_unpackhi_ps(r[6], r[7]);
  const __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE);
  const __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE);
  const __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xEE);
  const __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xEE);
  r[0] = _mm256_permute2f128_ps(u0, u4, 0x20);
  r[1] = _mm256_permute2f128_ps(u1, u5, 0x20);
  r[2] = _mm256_permute2f128_ps(u2, u6, 0x20);
  r[3] = _mm256_permute2f128_ps(u3, u7, 0x20);
  r[4] = _mm256_permute2f128_ps(u0, u4, 0x31);
  r[5] = _mm256_permute2f128_ps(u1, u5, 0x31);
  r[6] = _mm256_permute2f128_ps(u2, u6, 0x31);
  r[7] = _mm256_permute2f128_ps(u3, u7, 0x31);
}

// AVX2: acc + the int32 sums of 4 adjacent products u[i] * s[i]. vpmaddubsw saturates its
// int16 pair sums, so callers keep them below 2^15: |w| * (x * sign(w)) with |x| <= 127 gives
// at most 2 * 128 * 127; nibbles (<= 15) times |x| <= 127 much less.
struct MaddubsDot {
  // int8_add is w * x itself: vpmaddubsw's int16 pairs would saturate on (w + 128) * x.
  static constexpr bool kBiased = false;
  static inline __m256i add(__m256i acc, __m256i u, __m256i s) {
    return _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), _mm256_set1_epi16(1)));
  }
  // acc + the int32 sums of 4 adjacent products w[i] * x[i] of two signed byte vectors: the
  // sign of w moves onto x (exact for every int8 w, |-128| = 128 fits an unsigned byte).
  static inline __m256i int8_add(__m256i acc, __m256i w, __m256i x) {
    return add(acc, _mm256_abs_epi8(w), _mm256_sign_epi8(x, w));
  }
  // IQ4_XS (x86_ggml.h): acc + the int32 sums of 4 products g[i] * x[i] as |x| * (g with x's
  // sign), ax = |x| (|x| <= 128 and |g| <= 127: the pairs stay below 2^15).
  static inline __m256i grid_add(__m256i acc, __m256i g, __m256i x, __m256i ax) {
    return add(acc, ax, _mm256_sign_epi8(g, x));
  }
  // For sums known to stay within int16 (Q4_0's nibbles): the pairs accumulate as int16, then
  // widen_small turns the accumulator into int32 lane sums once, at the end.
  static inline __m256i add_small(__m256i acc, __m256i u, __m256i s) {
    return _mm256_add_epi16(acc, _mm256_maddubs_epi16(u, s));
  }
  static inline __m256i widen_small(__m256i acc) { return _mm256_madd_epi16(acc, _mm256_set1_epi16(1)); }
};

// Stores 8 int32 lanes, each already in [-128, 127], as 8 int8 (the packs do not saturate then).
inline void store_int8x8(std::int8_t* q, __m256i v) {
  const __m128i v16 = _mm_packs_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  _mm_storel_epi64(reinterpret_cast<__m128i*>(q), _mm_packs_epi16(v16, v16));
}

// round-half-away-from-zero (C's roundf) of 8 floats, exactly: v - trunc(v) is exact in
// float, and a fraction of magnitude >= 0.5 rounds away from zero.
inline __m256 round_half_away(__m256 v) {
  const __m256 t = _mm256_round_ps(v, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
  const __m256 sign_mask = _mm256_set1_ps(-0.0f);
  const __m256 frac = _mm256_andnot_ps(sign_mask, _mm256_sub_ps(v, t));
  const __m256 away = _mm256_and_ps(_mm256_cmp_ps(frac, _mm256_set1_ps(0.5f), _CMP_GE_OQ),
                                    _mm256_or_ps(_mm256_and_ps(v, sign_mask), _mm256_set1_ps(1.0f)));
  return _mm256_add_ps(t, away);
}

// runq.c's quantize() for groups that are a multiple of 8: max |x| is order-independent,
// x / scale is the same division, and the rounding is roundf's; an all-zero group gets
// scale 0 and zeros (see quant/q80.h).
void quantize_q80(const float* x, int n, int gs, std::int8_t* q, float* s) {
  if (gs % kLanes != 0) {
    quantize_q80_activations(x, n, gs, q, s);
    return;
  }
  const __m256 abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
  for (int g = 0; g < n / gs; ++g) {
    const float* xg = x + g * gs;
    __m256 m = _mm256_setzero_ps();
    // Operand order as the scalar "if (v > wmax) wmax = v": a NaN never becomes the max.
    for (int i = 0; i < gs; i += kLanes) m = _mm256_max_ps(_mm256_and_ps(_mm256_loadu_ps(xg + i), abs_mask), m);
    float lanes[kLanes];
    _mm256_storeu_ps(lanes, m);
    float wmax = 0.0f;
    for (float v : lanes) wmax = v > wmax ? v : wmax;
    const float scale = wmax / 127.0f;
    s[g] = scale;
    std::int8_t* qg = q + g * gs;
    if (scale == 0.0f) {
      for (int i = 0; i < gs; ++i) qg[i] = 0;
      continue;
    }
    const __m256 sv = _mm256_set1_ps(scale);
    for (int i = 0; i < gs; i += kLanes) {
      __m256i r = _mm256_cvttps_epi32(round_half_away(_mm256_div_ps(_mm256_loadu_ps(xg + i), sv)));
      // clamp_q80_int, 8 at a time: INT32_MIN (a NaN or out-of-range conversion) is 0, then
      // [-127, 127].
      r = _mm256_andnot_si256(_mm256_cmpeq_epi32(r, _mm256_set1_epi32(INT32_MIN)), r);
      r = _mm256_min_epi32(_mm256_max_epi32(r, _mm256_set1_epi32(-127)), _mm256_set1_epi32(127));
      store_int8x8(qg + i, r);
    }
  }
}

// out[0 .. 8*NV) = sum over t in order of att[t] * value_t[off .. off + 8*NV), lane by lane.
template <int NV>
inline void weighted_values(const AttentionArgs& a, const float* att, int positions, std::size_t off, float* out) {
  __m256 acc[NV];
  for (int j = 0; j < NV; ++j) acc[j] = _mm256_setzero_ps();
  for (int p = 0; p < positions; ++p) {
    const float* v = a.value_cache + static_cast<std::size_t>(p) * a.kv_dim + off;
    const __m256 w = _mm256_set1_ps(att[p]);
    for (int j = 0; j < NV; ++j) acc[j] = _mm256_add_ps(acc[j], _mm256_mul_ps(w, _mm256_loadu_ps(v + j * kLanes)));
  }
  for (int j = 0; j < NV; ++j) _mm256_storeu_ps(out + j * kLanes, acc[j]);
}

// run.c's softmax with its expf loop through the exp_sum slot (x86::select_exp_sum: expf's
// bits, the sum in index order), chosen once (it runs per attention head and token).
template <x86::ExpWidth W>
void softmax(float* x, int n) {
  static const ExpSumFn exp_sum = x86::select_exp_sum(W);
  reference::softmax_over(x, n, exp_sum);
}

// run.c's SwiGLU, hb[i] = hb[i] * (1 / (1 + expf(-hb[i]))) * hb2[i], with expf through
// x86::select_exp (expf's bits, 8 or 16 at a time) on 64 values per step and the rest in 8-lane
// vector steps: the reference's operations in its order, so its bits, the reference's zero for
// -hb[i] past kSiluExpLimit included (and no expf call that overflows there).
template <x86::ExpWidth W>
void swiglu(float* hb, const float* hb2, int n) {
  constexpr int kStep = 64;
  static const ExpFn exp = x86::select_exp(W);
  alignas(32) float e[kStep];
  const __m256 one = _mm256_set1_ps(1.0f), limit = _mm256_set1_ps(reference::kSiluExpLimit);
  const __m256 sign = _mm256_set1_ps(-0.0f);
  int i0 = 0;
  for (; i0 + kStep <= n; i0 += kStep) {
    for (int i = 0; i < kStep; i += kLanes) {
      const __m256 neg = _mm256_xor_ps(_mm256_loadu_ps(hb + i0 + i), sign);
      // expf only where the reference calls it; 0 (any finite value) where the result is 0.
      _mm256_store_ps(e + i, _mm256_andnot_ps(_mm256_cmp_ps(neg, limit, _CMP_GT_OQ), neg));
    }
    exp(e, kStep);
    for (int i = 0; i < kStep; i += kLanes) {
      const __m256 v = _mm256_loadu_ps(hb + i0 + i);
      const __m256 over = _mm256_cmp_ps(_mm256_xor_ps(v, sign), limit, _CMP_GT_OQ);
      const __m256 silu = _mm256_andnot_ps(over, _mm256_div_ps(one, _mm256_add_ps(one, _mm256_load_ps(e + i))));
      _mm256_storeu_ps(hb + i0 + i, _mm256_mul_ps(_mm256_mul_ps(v, silu), _mm256_loadu_ps(hb2 + i0 + i)));
    }
  }
  reference::swiglu(hb + i0, hb2 + i0, n - i0);
}

// The scores of N queries against M tiles of 8 key rows (row[u][p]: the keys of tile u's
// position p), lane p of lanes[j * M + u]: q[i] * k[i] added over i in order, 8 dimensions at a
// time from each transposed 8x8 tile, the dimensions past the last multiple of 8 lane by lane.
// Each (query, tile) is one chain of dependent adds, bound by the add's latency: N * M chains
// overlap (decode: one query, 4 tiles; prefill: 4 queries, one tile). N and M fixed, so the
// chains stay in registers.
template <int N, int M>
inline void tile_scores(const float* const (*row)[kLanes], const float* const* q, int head_size,
                        float (*lanes)[kLanes]) {
  __m256 score[N * M];
  for (int s = 0; s < N * M; ++s) score[s] = _mm256_setzero_ps();
  int i = 0;
  for (; i + kLanes <= head_size; i += kLanes)
    for (int u = 0; u < M; ++u) {
      __m256 col[kLanes];
      for (int p = 0; p < kLanes; ++p) col[p] = _mm256_loadu_ps(row[u][p] + i);
      transpose8(col);
      for (int j = 0; j < N; ++j)
        for (int c = 0; c < kLanes; ++c)
          score[j * M + u] = _mm256_add_ps(score[j * M + u], _mm256_mul_ps(_mm256_set1_ps(q[j][i + c]), col[c]));
    }
  for (int s = 0; s < N * M; ++s) _mm256_storeu_ps(lanes[s], score[s]);
  for (; i < head_size; ++i)
    for (int j = 0; j < N; ++j)
      for (int u = 0; u < M; ++u)
        for (int p = 0; p < kLanes; ++p) lanes[j * M + u][p] += q[j][i] * row[u][p][i];
}

// att[0 .. count) = lanes[0 .. count) / scale, as run.c divides each score (count <= 8).
inline void store_scores(float* att, const float* lanes, int count, float scale) {
  if (count == kLanes) {
    _mm256_storeu_ps(att, _mm256_div_ps(_mm256_loadu_ps(lanes), _mm256_set1_ps(scale)));
    return;
  }
  for (int p = 0; p < count; ++p) att[p] = lanes[p] / scale;
}

// N queries at consecutive positions (positions[j] keys for query j, the last the most): their
// scores over the tiles of 8 positions from tk, M tiles at a time while the last query's keys
// fill them, then one at a time. Each query keeps its own positions of a tile; in the last,
// partial tile the rows past the keys repeat the last key (finite, and discarded).
template <int N, int M>
void query_tiles(const AttentionArgs& a, const float* const* q, float* const* att, const int* positions,
                 const float* keys, float scale) {
  const auto kv_dim = static_cast<std::size_t>(a.kv_dim);
  const int last = positions[N - 1];
  int tk = 0;
  auto tiles = [&]<int kM>() {
    const float* row[kM][kLanes];
    for (int u = 0; u < kM; ++u)
      for (int p = 0; p < kLanes; ++p) {
        const int t = tk + u * kLanes + p;
        row[u][p] = keys + static_cast<std::size_t>(t < last ? t : last - 1) * kv_dim;
      }
    alignas(32) float lanes[N * kM][kLanes];
    tile_scores<N, kM>(row, q, a.head_size, lanes);
    for (int j = 0; j < N; ++j)
      for (int u = 0; u < kM; ++u) {
        const int t = tk + u * kLanes, own = positions[j] - t;
        if (own > 0) store_scores(att[j] + t, lanes[j * kM + u], own < kLanes ? own : kLanes, scale);
      }
    tk += kM * kLanes;
  };
  if constexpr (M > 1)
    while (tk + M * kLanes <= last) tiles.template operator()<M>();
  while (tk < last) tiles.template operator()<1>();
}

// Attention, exact: the scores of 8 positions at once (each lane sums q[i] * k_t[i] over i in
// order; the keys of 8 positions come as transposed 8x8 tiles), run.c's softmax, then the weighted
// sum of values with 8 dimensions per vector (each lane adds a_t * v_t[i] over t in order).
// Up to kTile queries of one head (a prefill block's tokens at consecutive positions) share each
// transposed key tile; query j's arithmetic is the single query's, its own positions only.
// W: the softmax's expf width (set_exp_slots).
template <int kTile, x86::ExpWidth W>
void attention_queries(const AttentionArgs& a) {
  const int kv_mul = a.n_heads / a.n_kv_heads;
  const float scale = std::sqrt(static_cast<float>(a.head_size));
  const int head_end = a.head_end < 0 ? a.n_heads : a.head_end;
  const auto q_stride = static_cast<std::size_t>(a.q_stride);
  for (int h = a.head_begin; h < head_end; ++h) {
    const std::size_t kv_off = static_cast<std::size_t>(h / kv_mul) * a.head_size;
    for (int t0 = 0; t0 < a.count; t0 += kTile) {
      const int n = a.count - t0 < kTile ? a.count - t0 : kTile;
      const float* q[kTile];
      float* att[kTile];
      int positions[kTile];
      for (int j = 0; j < n; ++j) {
        q[j] = a.q + (t0 + j) * q_stride + static_cast<std::size_t>(h) * a.head_size;
        att[j] = a.att + (static_cast<std::size_t>(h) * kTile + j) * a.att_stride;
        positions[j] = a.pos + t0 + j + 1;
      }
      // A lone query (decode) takes four tiles at a time: four chains of adds instead of one.
      const float* keys = a.key_cache + kv_off;
      if constexpr (kTile == 1) {
        query_tiles<1, 4>(a, q, att, positions, keys, scale);
      } else {
        static_assert(kTile == 4, "query_tiles takes up to 4 queries");
        if (n == 4)
          query_tiles<4, 1>(a, q, att, positions, keys, scale);
        else if (n == 3)
          query_tiles<3, 1>(a, q, att, positions, keys, scale);
        else if (n == 2)
          query_tiles<2, 1>(a, q, att, positions, keys, scale);
        else
          query_tiles<1, 4>(a, q, att, positions, keys, scale);
      }
      for (int j = 0; j < n; ++j) {
        softmax<W>(att[j], positions[j]);
        float* xb = a.out + (t0 + j) * q_stride + static_cast<std::size_t>(h) * a.head_size;
        int i = 0;
        // Up to 8 vectors (64 dimensions) per pass over the positions, so that each position's
        // values are read as one contiguous run and 8 chains of adds overlap; every lane still
        // adds a_t * v_t[i] over t in order.
        for (; i + 8 * kLanes <= a.head_size; i += 8 * kLanes) weighted_values<8>(a, att[j], positions[j], kv_off + i, xb + i);
        for (; i + 6 * kLanes <= a.head_size; i += 6 * kLanes) weighted_values<6>(a, att[j], positions[j], kv_off + i, xb + i);
        for (; i + 4 * kLanes <= a.head_size; i += 4 * kLanes) weighted_values<4>(a, att[j], positions[j], kv_off + i, xb + i);
        for (; i + 2 * kLanes <= a.head_size; i += 2 * kLanes) weighted_values<2>(a, att[j], positions[j], kv_off + i, xb + i);
        for (; i + kLanes <= a.head_size; i += kLanes) weighted_values<1>(a, att[j], positions[j], kv_off + i, xb + i);
        for (; i < a.head_size; ++i) {
          float acc = 0.0f;
          for (int p = 0; p < positions[j]; ++p)
            acc += att[j][p] * a.value_cache[static_cast<std::size_t>(p) * a.kv_dim + kv_off + static_cast<std::size_t>(i)];
          xb[i] = acc;
        }
      }
    }
  }
}

// One query (decode): scratch rows one per head, as AttentionArgs documents.
template <x86::ExpWidth W>
void attention(const AttentionArgs& a) {
  AttentionArgs one = a;
  one.count = 1;
  attention_queries<1, W>(one);
}

// ---- GGUF block types ----

// Activations to Q8_0 blocks, exactly as quantize_q8_0 (quant/q8_0.h): amax, d = amax / 127,
// id = d ? 1 / d : 0, q = roundf(x * id) with NaN -> 0 and clamped to [-127, 127] in float
// before the conversion (a huge or infinite x * id then gives +-127, as clamp_q80 does).
void quantize_q8_0_act(const float* x, int n, int, void* values, float*) {
  const __m256 abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
  auto* block = static_cast<unsigned char*>(values);
  for (int b = 0; b < n / kQ8_0Block; ++b, block += kQ8_0BlockBytes) {
    const float* xb = x + b * kQ8_0Block;
    __m256 m = _mm256_setzero_ps();
    for (int i = 0; i < kQ8_0Block; i += kLanes) m = _mm256_max_ps(_mm256_and_ps(_mm256_loadu_ps(xb + i), abs_mask), m);
    float lanes[kLanes];
    _mm256_storeu_ps(lanes, m);
    float amax = 0.0f;
    for (float v : lanes) amax = v > amax ? v : amax;
    const float d = amax / 127.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    store_fp16(block, fp32_to_fp16(d));
    const __m256 idv = _mm256_set1_ps(id);
    auto* q = reinterpret_cast<std::int8_t*>(block + 2);
    for (int i = 0; i < kQ8_0Block; i += kLanes) {
      __m256 r = round_half_away(_mm256_mul_ps(_mm256_loadu_ps(xb + i), idv));
      r = _mm256_and_ps(r, _mm256_cmp_ps(r, r, _CMP_ORD_Q));  // NaN -> 0
      r = _mm256_min_ps(_mm256_max_ps(r, _mm256_set1_ps(-127.0f)), _mm256_set1_ps(127.0f));
      store_int8x8(q + i, _mm256_cvttps_epi32(r));
    }
  }
}

// Stream compaction, 8 floats at a time: the compare's mask picks a permutation that moves
// the kept lanes to the front (in order), all 8 lanes are stored, and the output advances
// by the kept count; the next store overwrites the rest.
struct CompactTable {
  std::uint64_t lanes[256];  // byte j: the index of the j-th set bit of the mask
  constexpr CompactTable() : lanes() {
    for (unsigned m = 0; m < 256; ++m) {
      std::uint64_t packed = 0;
      int j = 0;
      for (unsigned lane = 0; lane < 8; ++lane)
        if (m & (1u << lane)) packed |= static_cast<std::uint64_t>(lane) << (8 * j++);
      lanes[m] = packed;
    }
  }
};
constexpr CompactTable kCompact;

__attribute__((target("avx2,popcnt"))) int compact_at_least(const float* x, int n, float threshold,
                                                               std::uint32_t* out) {
  const __m256 t = _mm256_set1_ps(threshold);
  int count = 0, i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    const __m256 v = _mm256_loadu_ps(x + i);
    const unsigned mask = static_cast<unsigned>(_mm256_movemask_ps(_mm256_cmp_ps(v, t, _CMP_GE_OQ)));  // NaN: not kept
    const __m256i order = _mm256_cvtepu8_epi32(_mm_cvtsi64_si128(static_cast<long long>(kCompact.lanes[mask])));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + count),
                        _mm256_permutevar8x32_epi32(_mm256_castps_si256(v), order));  // count + 8 <= i + 8 <= n
    count += _mm_popcnt_u32(mask);
  }
  return count + reference::compact_at_least(x + i, n - i, threshold, out + count);
}

// The slots that call expf, with expf `width` wide: exp, exp_sum, softmax, SwiGLU and
// attention (its softmax).
template <x86::ExpWidth W>
void set_exp_slots(Kernels& k) {
  k.exp = x86::select_exp(W);
  k.exp_sum = x86::select_exp_sum(W);
  k.softmax = softmax<W>;
  k.swiglu = swiglu<W>;
  k.attention = attention<W>;
  k.attention_batch = attention_queries<kAttentionQueryTile, W>;
}

}  // namespace

void set_exp_slots(Kernels& k, x86::ExpWidth width) {
  if (width == x86::ExpWidth::k512)
    set_exp_slots<x86::ExpWidth::k512>(k);
  else
    set_exp_slots<x86::ExpWidth::k256>(k);
}

const Kernels& avx2_kernels() {
  static const Kernels kAvx2 = [] {
    Kernels k = reference_kernels();
    k.name = "avx2";
    k.matmul[type_index(TensorType::kF32)] = matmul_f32_entry<matmul_f32_lanes<Vec256>>;
    k.matmul[type_index(TensorType::kQ80)] = matmul_q80_lanes<Vec256, MaddubsDot>;
    k.interleave[type_index(TensorType::kF32)] = fixed_interleave<kLanes>;
    k.interleave[type_index(TensorType::kQ80)] = q80_interleave_lanes<Vec256>;
    k.quantize_act[type_index(TensorType::kQ80)] = quantize_q80_entry<quantize_q80>;
    k.matmul_batch[type_index(TensorType::kQ80)] = matmul_q80_batch_lanes<Vec256, MaddubsDot>;
    k.matmul[type_index(TensorType::kQ8_0)] = matmul_ggml<Vec256, MaddubsDot, false>;
    k.matmul[type_index(TensorType::kQ4_0)] = matmul_ggml<Vec256, MaddubsDot, true>;
    k.matmul_batch[type_index(TensorType::kQ8_0)] = matmul_ggml_batch<Vec256, MaddubsDot, false>;
    k.matmul_batch[type_index(TensorType::kQ4_0)] = matmul_ggml_batch<Vec256, MaddubsDot, true>;
    k.interleave[type_index(TensorType::kQ8_0)] = fixed_interleave<kLanes>;
    k.interleave[type_index(TensorType::kQ4_0)] = fixed_interleave<kLanes>;
    k.quantize_act[type_index(TensorType::kQ8_0)] = quantize_q8_0_act;
    k.matmul[type_index(TensorType::kIQ4_XS)] = matmul_iq4_xs_lanes<Vec256, MaddubsDot>;
    k.interleave[type_index(TensorType::kIQ4_XS)] = fixed_interleave<kLanes>;
    k.matmul[type_index(TensorType::kF16)] = matmul_f16_lanes<Vec256>;
    k.interleave[type_index(TensorType::kF16)] = fixed_interleave<kLanes>;
    set_exp_slots(k, x86::ExpWidth::k256);
    k.compact_at_least = compact_at_least;
    return k;
  }();
  return kAvx2;
}

}  // namespace pocketlm
