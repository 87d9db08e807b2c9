// The tiled4 backend: portable C++ (no intrinsics, no vector extensions) shaped like the
// PSP's VFPU (quad vectors, 4x4 tiles), bit-identical to `reference`. It is the exact default
// on CPUs without a SIMD backend (32-bit MIPS, Xtensa, ...) and the kernel the PSP port
// replaces with VFPU instructions. The loops are shaped so that a compiler vectorizes them
// across rows (4 float lanes = 4 rows) without ever reordering one row's additions.
// - fp32 matmul: weights interleaved by 4 rows (quant/row_interleave.h), so a quad
//   w[r..r+4)[j] is 4 consecutive floats and columns j..j+3 of a 4-row block are one 4x4 tile
//   of 16 consecutive floats. Per tile the block's quad of accumulators does
//   acc = acc + col_c * x[j + c] for c = 0..3 in order, a separate multiply and add per row
//   (the library is built with -ffp-contract=off: a fused multiply-add rounds once and would
//   change the result). The column loop is outside the row-block loop, so the accumulators
//   are not loop-carried reductions (which a vectorizer could only keep in order lane by
//   lane) but a small array updated one quad at a time.
// - q8_0 matmul: 4 rows at a time sharing each activation; the activations are widened to
//   int16 once, so each product is an int16 x int16 multiply-add. The int32 group sums are
//   exact in any order (the compiler may split them). Then each row does runq.c's
//   acc += ((float)isum * w_scale) * x_scale, groups in order. Where the group size is whole
//   words the rows are interleaved by 4 (quant/q80_interleave.h), so one pointer walks 4 rows'
//   values and one their scales; otherwise row-major, as in the file.
// - attention: scores for 4 positions at a time (each one summed in index order), and the
//   weighted sum of values adds 4 positions per pass over the output, in position order.
// - Q4_0 and Q8_0: weights interleaved by 4 rows with 4 bytes of a row side by side
//   (quant/block_interleave.h): one pass over a block's bytes gives the exact int32 sums of 4
//   rows (Q4_0 multiplies the nibbles q + 8 and subtracts 8 * the activation block's sum), then
//   each row does the reference's acc = acc + (float)isum * (d_w * d_x), blocks in order.
// - IQ4_XS: the same 4-row interleave (head2 = 2): per sub-block one pass over its nibble bytes
//   looks each up in the 16-entry grid and gives the 4 rows' exact int32 sums, then each row
//   does the reference's dl = d * (float)(ls - 32), acc = acc + (float)isum * (dl * d_x).
// - Batched prefill, on a core with 32 registers (MIPS): two tokens over each interleaved
//   weight load of q80, Q8_0 and Q4_0, each token with the one-token kernel's arithmetic.
// Ragged rows (d % 4) use the reference loops; rmsnorm, softmax and swiglu are the
// reference ones (they are dominated by expf / sqrtf / powf and cosf / sinf calls).
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "pocketlm/kernels/batch.h"
#include "pocketlm/kernels/interleave4_ggml.h"
#include "pocketlm/kernels/q80_quad.h"
#include "pocketlm/kernels/reference.h"
#include "pocketlm/quant/fp16.h"
#include "pocketlm/quant/iq4_xs.h"
#include "pocketlm/quant/q4_0.h"
#include "pocketlm/quant/q8_0.h"
#include "pocketlm/quant/q80.h"
#include "pocketlm/quant/q80_interleave.h"

#if defined(__GNUC__) || defined(__clang__) || defined(_MSC_VER)
#define POCKETLM_RESTRICT __restrict
#else
#define POCKETLM_RESTRICT
#endif

namespace pocketlm {

namespace {

constexpr int kLanes = 4;         // rows per quad (the interleave)
constexpr int kChunkBlocks = 8;   // row blocks per pass over x: 32 accumulators (8 quads)

// Row blocks [0, nb) (nb <= kChunkBlocks) of an interleaved matrix starting at w0. Columns go
// 4 at a time: per block a 4x4 tile (16 consecutive floats, column c at t + 4c) updates that
// block's 4 accumulators, in column order.
void matmul_f32_chunk(float* POCKETLM_RESTRICT out, const float* POCKETLM_RESTRICT x,
                      const float* POCKETLM_RESTRICT w0, int n, int nb) {
  const std::size_t block = static_cast<std::size_t>(kLanes) * static_cast<std::size_t>(n);
  float acc[kChunkBlocks * kLanes];
  for (int i = 0; i < nb * kLanes; ++i) acc[i] = 0.0f;
  int j = 0;
  for (; j + 4 <= n; j += 4) {
    const float x0 = x[j], x1 = x[j + 1], x2 = x[j + 2], x3 = x[j + 3];
    const float* POCKETLM_RESTRICT t = w0 + static_cast<std::size_t>(j) * kLanes;
    for (int b = 0; b < nb; ++b, t += block) {
      float* POCKETLM_RESTRICT a = acc + b * kLanes;
      float a0 = a[0], a1 = a[1], a2 = a[2], a3 = a[3];
      a0 = a0 + t[0] * x0;  a1 = a1 + t[1] * x0;  a2 = a2 + t[2] * x0;  a3 = a3 + t[3] * x0;
      a0 = a0 + t[4] * x1;  a1 = a1 + t[5] * x1;  a2 = a2 + t[6] * x1;  a3 = a3 + t[7] * x1;
      a0 = a0 + t[8] * x2;  a1 = a1 + t[9] * x2;  a2 = a2 + t[10] * x2; a3 = a3 + t[11] * x2;
      a0 = a0 + t[12] * x3; a1 = a1 + t[13] * x3; a2 = a2 + t[14] * x3; a3 = a3 + t[15] * x3;
      a[0] = a0; a[1] = a1; a[2] = a2; a[3] = a3;
    }
  }
  for (; j < n; ++j) {
    const float xj = x[j];
    const float* POCKETLM_RESTRICT t = w0 + static_cast<std::size_t>(j) * kLanes;
    for (int b = 0; b < nb; ++b, t += block) {
      float* POCKETLM_RESTRICT a = acc + b * kLanes;
      a[0] = a[0] + t[0] * xj; a[1] = a[1] + t[1] * xj; a[2] = a[2] + t[2] * xj; a[3] = a[3] + t[3] * xj;
    }
  }
  for (int i = 0; i < nb * kLanes; ++i) out[i] = acc[i];
}

void matmul_f32(float* out, const float* x, const float* w, int n, int d) {
  const int blocks = d / kLanes;
  for (int b = 0; b < blocks; b += kChunkBlocks) {
    const int nb = blocks - b < kChunkBlocks ? blocks - b : kChunkBlocks;
    matmul_f32_chunk(out + b * kLanes, x, w + static_cast<std::size_t>(b) * kLanes * n, n, nb);
  }
  const int full = blocks * kLanes;
  if (full < d) reference::matmul_f32(out + full, x, w + static_cast<std::size_t>(full) * n, n, d - full);
}

// Activations are widened to int16 once per matmul, kXChunk at a time (1 KiB of stack), so
// that the 4-row group sums below multiply int16 by int16 (what a 16-bit multiply-add does).
constexpr int kXChunk = 512;

// The int32 sums of one group (gs values) for 4 rows w[0..3] (row k at w + k * n), sharing
// each activation between the 4 rows. Every product is exact in int32 and integer addition
// is associative, so the compiler may split the sums (vectorize) freely. GS > 0 is the group
// size known at compile time, 0 reads it from gs_runtime. X is int16_t (widened) or int8_t.
template <int GS, typename X>
inline void group_sums_4(std::int32_t* POCKETLM_RESTRICT isum, const X* POCKETLM_RESTRICT x,
                         const std::int8_t* POCKETLM_RESTRICT w, std::size_t n, int gs_runtime) {
  const int gs = GS > 0 ? GS : gs_runtime;
  const std::int8_t* POCKETLM_RESTRICT w0 = w;
  const std::int8_t* POCKETLM_RESTRICT w1 = w + n;
  const std::int8_t* POCKETLM_RESTRICT w2 = w + 2 * n;
  const std::int8_t* POCKETLM_RESTRICT w3 = w + 3 * n;
  std::int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  for (int j = 0; j < gs; ++j) {
    const std::int16_t xv = x[j];
    s0 += xv * static_cast<std::int16_t>(w0[j]);
    s1 += xv * static_cast<std::int16_t>(w1[j]);
    s2 += xv * static_cast<std::int16_t>(w2[j]);
    s3 += xv * static_cast<std::int16_t>(w3[j]);
  }
  isum[0] = s0;
  isum[1] = s1;
  isum[2] = s2;
  isum[3] = s3;
}

// Rows [0, rows) (a multiple of 4), groups [g0, g1) of each; x holds the activations of
// those groups (x[0] is element g0 * gs). The first pass over a row starts its accumulator at
// 0, later passes continue from out[] (a float round trip: exact). Row i's scales start at
// ws + (i * n) / gs, as runq.c indexes them (ws[(i * n + j) / gs] for j a multiple of gs).
template <int GS, typename X>
void matmul_q80_quads(float* POCKETLM_RESTRICT out, const X* POCKETLM_RESTRICT x, const float* POCKETLM_RESTRICT xs,
                      const std::int8_t* POCKETLM_RESTRICT wq, const float* POCKETLM_RESTRICT ws, int n, int rows,
                      int gs_runtime, int g0, int g1) {
  const int gs = GS > 0 ? GS : gs_runtime;
  const std::size_t sn = static_cast<std::size_t>(n);
  const std::size_t sgs = static_cast<std::size_t>(gs);
  for (int r = 0; r < rows; r += kLanes) {
    const std::int8_t* wr = wq + static_cast<std::size_t>(r) * sn + static_cast<std::size_t>(g0) * sgs;
    const float* wsr[kLanes];
    for (int k = 0; k < kLanes; ++k) wsr[k] = ws + (static_cast<std::size_t>(r + k) * sn) / sgs;
    float acc[kLanes];
    for (int k = 0; k < kLanes; ++k) acc[k] = g0 == 0 ? 0.0f : out[r + k];
    for (int g = g0; g < g1; ++g) {
      const std::size_t j = static_cast<std::size_t>(g - g0) * sgs;
      std::int32_t isum[kLanes];
      group_sums_4<GS>(isum, x + j, wr + j, sn, gs);
      const float x_scale = xs[g];
      for (int k = 0; k < kLanes; ++k) acc[k] = acc[k] + (static_cast<float>(isum[k]) * wsr[k][g]) * x_scale;
    }
    for (int k = 0; k < kLanes; ++k) out[r + k] = acc[k];
  }
}

// Runs groups(x, g0, g1) over groups [0, groups) of the activations xq (group size gs), x holding
// those groups widened to int16, kXChunk values at a time (x[0] is element g0 * gs); with groups
// too large for the buffer, once over the int8 activations.
template <class Groups>
void over_x_chunks(const std::int8_t* xq, int gs, int groups, Groups&& run) {
  if (gs > kXChunk) {
    run(xq, 0, groups);
    return;
  }
  const int chunk_groups = kXChunk / gs;
  std::int16_t x16[kXChunk];
  for (int g0 = 0; g0 < groups; g0 += chunk_groups) {
    const int g1 = groups - g0 < chunk_groups ? groups : g0 + chunk_groups;
    const std::int8_t* src = xq + static_cast<std::size_t>(g0) * static_cast<std::size_t>(gs);
    for (int j = 0; j < (g1 - g0) * gs; ++j) x16[j] = src[j];
    run(static_cast<const std::int16_t*>(x16), g0, g1);
  }
}

template <int GS>
void matmul_q80_rows(float* out, const std::int8_t* xq, const float* xs, const std::int8_t* wq, const float* ws,
                     int n, int rows, int gs_runtime) {
  const int gs = GS > 0 ? GS : gs_runtime;
  const int groups = n / gs;  // runq.c's `j <= n - gs`: a partial last group is skipped
  if (groups == 0) {
    for (int i = 0; i < rows; ++i) out[i] = 0.0f;
    return;
  }
  over_x_chunks(xq, gs, groups, [&](const auto* x, int g0, int g1) {
    matmul_q80_quads<GS>(out, x, xs, wq, ws, n, rows, gs, g0, g1);
  });
}

void matmul_q80(float* out, const std::int8_t* xq, const float* xs, const std::int8_t* wq, const float* ws, int n,
                int d, int gs) {
  const int full = d / kLanes * kLanes;
  if (gs == 32)
    matmul_q80_rows<32>(out, xq, xs, wq, ws, n, full, gs);
  else if (gs == 64)
    matmul_q80_rows<64>(out, xq, xs, wq, ws, n, full, gs);
  else
    matmul_q80_rows<0>(out, xq, xs, wq, ws, n, full, gs);
  if (full < d) {  // n is a multiple of gs (kernels.h), so the tail's scales start at full * n / gs
    const std::size_t off = static_cast<std::size_t>(full) * static_cast<std::size_t>(n);
    reference::matmul_q80(out + full, xq, xs, wq + off, ws + off / static_cast<std::size_t>(gs), n, d - full, gs);
  }
}

// The same over q80 interleaved by 4 rows (quant/q80_interleave.h, il = 4: per group, chunks of
// 16 bytes with a word of each row, and the 4 rows' scales side by side), rows [0, full): one
// pointer walks a block's values and one its scales, where row-major needs 4 of each (on a
// 32-bit core without SIMD, eight pointers and the sums do not fit the registers).
// Where the compiler has vector registers (SSE2, NEON) it vectorizes a row's contiguous group
// sums (group_sums_4) but not this loop (6x slower on x86-64): there each 4-row block's values
// of the pass are first copied back to row-major (kVectorLoops). Both give the same exact sums.
#if defined(__SSE2__) || defined(__ARM_NEON) || defined(__ARM_NEON__)
constexpr bool kVectorLoops = true;
#else
constexpr bool kVectorLoops = false;
#endif

// Groups [g0, g1) of rows [0, full), x holding those groups' activations (x[0] is element g0 * gs).
template <int GS, typename X>
void matmul_q80_il4_groups(float* POCKETLM_RESTRICT out, const X* POCKETLM_RESTRICT x, const float* POCKETLM_RESTRICT xs,
                           const std::int8_t* POCKETLM_RESTRICT wq, const float* POCKETLM_RESTRICT ws, int n, int full,
                           int gs_runtime, int g0, int g1) {
  const int gs = GS > 0 ? GS : gs_runtime;
  const std::size_t groups = static_cast<std::size_t>(n / gs);
  for (int r = 0; r < full; r += kLanes) {
    const std::int8_t* POCKETLM_RESTRICT w =
        wq + static_cast<std::size_t>(r) * static_cast<std::size_t>(n) + static_cast<std::size_t>(g0 * gs) * kLanes;
    const float* POCKETLM_RESTRICT sw = ws + static_cast<std::size_t>(r) * groups + static_cast<std::size_t>(g0) * kLanes;
    Q80Quad acc;
    if (g0 > 0) acc.load(out + r);
    if constexpr (kVectorLoops) {
      const int values = (g1 - g0) * gs;  // over_x_chunks's int16 chunk, or the whole row's int8
      if (values <= kXChunk) {
        std::int8_t rows[kLanes * kXChunk];
        for (int j = 0; j < values; j += 4, w += 4 * kLanes)
          for (int k = 0; k < kLanes; ++k) std::memcpy(rows + k * kXChunk + j, w + 4 * k, 4);
        for (int g = g0; g < g1; ++g, sw += kLanes) {
          const std::size_t j = static_cast<std::size_t>(g - g0) * static_cast<std::size_t>(gs);
          std::int32_t isum[kLanes];
          group_sums_4<GS>(isum, x + j, rows + j, kXChunk, gs);
          acc.add(isum[0], isum[1], isum[2], isum[3], sw, xs[g]);
        }
        acc.store(out + r);
        continue;
      }
    }
    const X* POCKETLM_RESTRICT xg = x;
    for (int g = g0; g < g1; ++g, sw += kLanes) {
      std::int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
      for (int j = 0; j < gs; j += 4, xg += 4, w += 4 * kLanes) {
        const std::int32_t x0 = xg[0], x1 = xg[1], x2 = xg[2], x3 = xg[3];
        s0 += x0 * w[0] + x1 * w[1] + x2 * w[2] + x3 * w[3];
        s1 += x0 * w[4] + x1 * w[5] + x2 * w[6] + x3 * w[7];
        s2 += x0 * w[8] + x1 * w[9] + x2 * w[10] + x3 * w[11];
        s3 += x0 * w[12] + x1 * w[13] + x2 * w[14] + x3 * w[15];
      }
      acc.add(s0, s1, s2, s3, sw, xs[g]);
    }
    acc.store(out + r);
  }
}

template <int GS>
void matmul_q80_il4(float* out, const std::int8_t* xq, const float* xs, const std::int8_t* wq, const float* ws, int n,
                    int full, int gs_runtime) {
  const int gs = GS > 0 ? GS : gs_runtime;
  const int groups = n / gs;
  over_x_chunks(xq, gs, groups, [&](const auto* x, int g0, int g1) {
    matmul_q80_il4_groups<GS>(out, x, xs, wq, ws, n, full, gs, g0, g1);
  });
}

// f.template operator()<GS>(), GS the group size at compile time for the common ones (0: gs at run time).
template <class F>
void with_group_size(int gs, F&& f) {
  if (gs == 4)
    f.template operator()<4>();
  else if (gs == 32)
    f.template operator()<32>();
  else if (gs == 64)
    f.template operator()<64>();
  else
    f.template operator()<0>();
}

int q80_interleave(int group) { return q80_interleave_rows(group, kLanes); }

void matmul_q80_table(float* out, const Matrix& w, const Activation& x, int rows) {
  const auto* xq = static_cast<const std::int8_t*>(x.values);
  const auto* wq = static_cast<const std::int8_t*>(w.values);
  const int n = w.cols, gs = w.group;
  if (w.interleave != kLanes) {
    matmul_q80(out, xq, x.scales, wq, w.scales, n, rows, gs);
    return;
  }
  const int full = n / gs == 0 ? 0 : rows / kLanes * kLanes;
  // Not with_group_size: through it GCC made bare-metal MIPS32's decode at group size 4 4 % longer.
  if (gs == 4)
    matmul_q80_il4<4>(out, xq, x.scales, wq, w.scales, n, full, gs);
  else if (gs == 32)
    matmul_q80_il4<32>(out, xq, x.scales, wq, w.scales, n, full, gs);
  else if (gs == 64)
    matmul_q80_il4<64>(out, xq, x.scales, wq, w.scales, n, full, gs);
  else
    matmul_q80_il4<0>(out, xq, x.scales, wq, w.scales, n, full, gs);
  reference::matmul_q80_tail(out, w, x, full, rows);
}

// Groups [0, groups) of rows [0, full) of q80 interleaved by 4 for T tokens, one pass over the
// weights: token i's int8 activations at x[i], scales at xs[i], outputs at out[i] (row 0). Each
// weight byte is loaded once for the T tokens; per token the 4 rows' exact int32 group sums,
// then Q80Quad's float step, as matmul_q80_il4_groups does for one token.
template <int GS, int T>
void q80_il4_tokens(float* const* out, const std::int8_t* const* x, const float* const* xs, const std::int8_t* wq,
                    const float* ws, int n, int full, int gs_runtime) {
  const int gs = GS > 0 ? GS : gs_runtime;
  const int groups = n / gs;
  const std::int8_t* POCKETLM_RESTRICT w = wq;
  const float* POCKETLM_RESTRICT sw = ws;
  for (int r = 0; r < full; r += kLanes) {
    Q80Quad acc[T];
    for (int g = 0; g < groups; ++g, sw += kLanes) {
      const std::size_t j0 = static_cast<std::size_t>(g) * static_cast<std::size_t>(gs);
      std::int32_t s[T][kLanes] = {};
      for (int j = 0; j < gs; j += 4, w += 4 * kLanes) {
        std::int32_t xv[T][4];
        for (int i = 0; i < T; ++i)
          for (int c = 0; c < 4; ++c) xv[i][c] = x[i][j0 + static_cast<std::size_t>(j + c)];
        // Each weight byte once, against every token's activation of its column.
        for (int c = 0; c < 4; ++c)
          for (int k = 0; k < kLanes; ++k) {
            const std::int32_t wb = w[4 * k + c];
            for (int i = 0; i < T; ++i) s[i][k] += xv[i][c] * wb;
          }
      }
      for (int i = 0; i < T; ++i) acc[i].add(s[i][0], s[i][1], s[i][2], s[i][3], sw, xs[i][g]);
    }
    for (int i = 0; i < T; ++i) acc[i].store(out[i] + r);
  }
}

// Tokens that share each weight load in the batched matmuls (q80, Q8_0, Q4_0). Two tokens' sums
// and activations stay in the registers of a core with 32 (MIPS, under qemu-mipsel with
// bench/device/insn_profile.c: a synth15M prompt token 27.1 M -> 22.7 M instructions for q80,
// 27.8 M -> 21.7 M for Q4_0); with 16 (the LX7's window; Thumb-2's 13) LLVM spills them, 5.1
// instructions a q80 multiply-add against 3.6 for one token, so there the batch takes the
// generic path.
#if defined(__mips__)
constexpr int kBatchTokens = 2;
#else
constexpr int kBatchTokens = 1;
#endif

// The batched matmuls (kernels/batch.h) run on cores without vector loops and with 32 registers
// (the table's slots; elsewhere they stay null and the generic path runs), over tiles of
// batch_tile_rows rows and kBatchTokens tokens (over_tiles_and_token_groups). o[i]: token t + i's
// outputs from row r0.
inline void token_outputs(float* out, std::size_t out_stride, int r0, int t, int m, float** o) {
  for (int i = 0; i < m; ++i) o[i] = out + static_cast<std::size_t>(t + i) * out_stride + r0;
}

// The batched q80 matmul over q80 interleaved by 4: two tokens at a time through q80_il4_tokens,
// which loads each weight byte once for both, the odd one through decode's own code. The
// activations stay int8 (a load costs what an int16 one does on MIPS; two int16 copies would pass
// the firmware's 1,280-byte frame bound). Row-major matrices take the generic path.
void matmul_q80_batch(float* out, std::size_t out_stride, const Matrix& w, const ActivationBatch& x, int rows) {
  const int n = w.cols, gs = w.group, groups = n / gs;
  if (w.interleave != kLanes || groups == 0) {
    matmul_batch_tiled(matmul_q80_table, out, out_stride, w, x, rows);
    return;
  }
  const int full = rows / kLanes * kLanes;
  const auto* wq = static_cast<const std::int8_t*>(w.values);
  with_group_size(gs, [&]<int GS>() {
    over_tiles_and_token_groups<kBatchTokens>(full, x.count, batch_tile_rows(w), [&](int r0, int r1, int t, int m) {
      const int tile_rows = r1 - r0;
      float* o[kBatchTokens];
      token_outputs(out, out_stride, r0, t, m, o);
      const std::int8_t* wt = wq + static_cast<std::size_t>(r0) * static_cast<std::size_t>(n);
      const float* st = w.scales + static_cast<std::size_t>(r0) * static_cast<std::size_t>(groups);
      const std::int8_t* xq[kBatchTokens];
      const float* xs[kBatchTokens];
      for (int i = 0; i < m; ++i) {
        const Activation a = x.at(t + i);
        xq[i] = static_cast<const std::int8_t*>(a.values);
        xs[i] = a.scales;
      }
      if (m == kBatchTokens)
        q80_il4_tokens<GS, kBatchTokens>(o, xq, xs, wt, st, n, tile_rows, gs);
      else  // through the table's entry, so that decode's matmul_q80_il4 keeps its one caller
        matmul_q80_table(o[0], rows_from(w, r0), x.at(t), tile_rows);
    });
  });
  for (int t = 0; t < x.count; ++t)  // the row-major tail, as matmul_q80_table computes it
    reference::matmul_q80_tail(out + static_cast<std::size_t>(t) * out_stride, w, x.at(t), full, rows);
}

// run.c's attention, statement for statement per value, with the loops tiled by 4 positions:
// - 4 scores at once, each q·k summed in index order, then divided by sqrt(head_size);
// - xb[i] += a[t] * v_t[i] for 4 positions t per pass, still in position order per i.
void attention(const AttentionArgs& a) {
  const int kv_mul = a.n_heads / a.n_kv_heads;
  const float scale = std::sqrt(static_cast<float>(a.head_size));
  const int head_end = a.head_end < 0 ? a.n_heads : a.head_end;
  const int hs = a.head_size;
  const std::size_t kv_dim = static_cast<std::size_t>(a.kv_dim);
  for (int h = a.head_begin; h < head_end; ++h) {
    const float* POCKETLM_RESTRICT q = a.q + h * hs;
    float* POCKETLM_RESTRICT att = a.att + static_cast<std::size_t>(h) * a.att_stride;
    const std::size_t kv_off = static_cast<std::size_t>(h / kv_mul) * hs;
    const float* kbase = a.key_cache + kv_off;
    int t = 0;
    for (; t + 4 <= a.pos + 1; t += 4) {
      const float* POCKETLM_RESTRICT k0 = kbase + static_cast<std::size_t>(t) * kv_dim;
      const float* POCKETLM_RESTRICT k1 = k0 + kv_dim;
      const float* POCKETLM_RESTRICT k2 = k1 + kv_dim;
      const float* POCKETLM_RESTRICT k3 = k2 + kv_dim;
      float s0 = 0.0f, s1 = 0.0f, s2 = 0.0f, s3 = 0.0f;
      for (int i = 0; i < hs; ++i) {
        const float qi = q[i];
        s0 = s0 + qi * k0[i];
        s1 = s1 + qi * k1[i];
        s2 = s2 + qi * k2[i];
        s3 = s3 + qi * k3[i];
      }
      att[t] = s0 / scale;
      att[t + 1] = s1 / scale;
      att[t + 2] = s2 / scale;
      att[t + 3] = s3 / scale;
    }
    for (; t <= a.pos; ++t) {
      const float* POCKETLM_RESTRICT k = kbase + static_cast<std::size_t>(t) * kv_dim;
      float score = 0.0f;
      for (int i = 0; i < hs; ++i) score = score + q[i] * k[i];
      att[t] = score / scale;
    }
    reference::softmax(att, a.pos + 1);
    float* POCKETLM_RESTRICT xb = a.out + h * hs;
    std::memset(xb, 0, static_cast<std::size_t>(hs) * sizeof(float));
    const float* vbase = a.value_cache + kv_off;
    t = 0;
    for (; t + 4 <= a.pos + 1; t += 4) {
      const float* POCKETLM_RESTRICT v0 = vbase + static_cast<std::size_t>(t) * kv_dim;
      const float* POCKETLM_RESTRICT v1 = v0 + kv_dim;
      const float* POCKETLM_RESTRICT v2 = v1 + kv_dim;
      const float* POCKETLM_RESTRICT v3 = v2 + kv_dim;
      const float a0 = att[t], a1 = att[t + 1], a2 = att[t + 2], a3 = att[t + 3];
      for (int i = 0; i < hs; ++i) {
        float acc = xb[i];
        acc = acc + a0 * v0[i];
        acc = acc + a1 * v1[i];
        acc = acc + a2 * v2[i];
        acc = acc + a3 * v3[i];
        xb[i] = acc;
      }
    }
    for (; t <= a.pos; ++t) {
      const float* POCKETLM_RESTRICT v = vbase + static_cast<std::size_t>(t) * kv_dim;
      const float w = att[t];
      for (int i = 0; i < hs; ++i) xb[i] = xb[i] + w * v[i];
    }
  }
}


// ---- GGUF block types ----

// The 4 rows' int32 sums of one block: one pass over the block's bytes (groups of 4 rows x 4
// bytes) shares each activation between the rows.
template <bool kQ4>
void block_sums(std::int32_t* POCKETLM_RESTRICT isum, const unsigned char* POCKETLM_RESTRICT q,
                const std::int8_t* POCKETLM_RESTRICT xq) {
  constexpr int kGroups = kQ4 ? 4 : 8;
  for (int t = 0; t < kGroups; ++t) {
    const unsigned char* v = q + 16 * t;  // 4 rows x 4 bytes
    for (int k = 0; k < kLanes; ++k) {
      std::int32_t s = 0;
      for (int i = 0; i < 4; ++i) {
        const unsigned char byte = v[4 * k + i];
        if constexpr (kQ4)
          s += static_cast<std::int32_t>(byte & 0x0F) * xq[4 * t + i] +
               static_cast<std::int32_t>(byte >> 4) * xq[16 + 4 * t + i];
        else
          s += static_cast<std::int32_t>(static_cast<std::int8_t>(byte)) * xq[4 * t + i];
      }
      isum[k] += s;
    }
  }
}

template <bool kQ4>
constexpr MatmulFn matmul_ggml = interleave4::matmul_interleaved4<kQ4, interleave4::matmul_rows4<kQ4, block_sums<kQ4>>>;

// Q4_0 for a 32-bit core without SIMD (the ESP32-S3's LX7, the PSP's MIPS): two multiply-adds
// in one 32-bit multiply. A row's word of a group (4 bytes: 8 nibbles) masked with 0x000F000F
// after a shift of 0, 4, 8 or 12 holds two nibbles n0, n1 in 16-bit fields, a = n0 + n1 * 2^16;
// the activations of those two columns are packed once per matmul the other way round,
// p = x1 + x0 * 2^16. Modulo 2^32, a * p = n0 * x1 + (n0 * x0 + n1 * x1) * 2^16: the upper field
// gains the two products, the lower one a cross term. Over 8 pairs (half a block) the upper sum D
// is at most 16 * 15 * 128 = 30720 in magnitude and the cross terms' L at most 15360, so the
// int32 accumulator started at 2^15 is exactly 2^15 + L + D * 2^16 and D is its arithmetic
// shift right by 16. Half-block sums are exact integers, so the row's isum is block_sums's, and
// the float accumulation is matmul_rows4's: bit-identical. The activation words, 8 * sum(x) and
// the scales are made once per pass of blocks (interleave4::q4_0_pass_terms). The LX7's kernel
// bench counts 4.5 instructions a multiply-add (a nibble a byte load before: 6.7): the word work
// is 2.1, the rest is LLVM 22 spilling the 8 packed pairs the 4 rows share, and the block's
// scale and float work; a row, or a pair of rows, at a time spilled more (5.2 and 5.0).
constexpr int kQ4BlocksAPass = 8;  // 512 bytes of packed activation pairs on the stack

// The packed pairs of one activation block, in the order the nibble fields come: per group t,
// shift 0 (columns 4t, 4t+2), 4 (16+4t, 18+4t), 8 (4t+1, 4t+3), 12 (17+4t, 19+4t).
inline void q4_0_pack_pairs(std::uint32_t* p, const std::int8_t* xq) {
  const auto pair = [&](int c0, int c1) {
    return static_cast<std::uint32_t>(static_cast<std::int32_t>(xq[c1])) +
           (static_cast<std::uint32_t>(static_cast<std::int32_t>(xq[c0])) << 16);
  };
  for (int t = 0; t < 4; ++t, p += 4) {
    p[0] = pair(4 * t, 4 * t + 2);
    p[1] = pair(16 + 4 * t, 18 + 4 * t);
    p[2] = pair(4 * t + 1, 4 * t + 3);
    p[3] = pair(17 + 4 * t, 19 + 4 * t);
  }
}

// One row's word of a group against the group's 4 packed pairs, into the half-block accumulator.
inline std::uint32_t q4_0_word_pairs(std::uint32_t acc, std::uint32_t w, const std::uint32_t* p) {
  constexpr std::uint32_t kMask = 0x000F000Fu;
  acc += (w & kMask) * p[0];
  acc += ((w >> 4) & kMask) * p[1];
  acc += ((w >> 8) & kMask) * p[2];
  acc += ((w >> 12) & kMask) * p[3];
  return acc;
}

// The little-endian T (uint32_t or uint16_t) at q, aligned to sizeof(T) (matrices in an arena
// are 4-aligned; interleaved Q4_0 blocks are 72 bytes, their scales at 2 k and their groups at
// 8 + 16 t + 4 k): one load where the compiler knows the alignment.
template <class T>
inline T load_le(const unsigned char* q) {
  const auto* a = static_cast<const unsigned char*>(__builtin_assume_aligned(q, sizeof(T)));
  T v;
  std::memcpy(&v, a, sizeof(T));
  if constexpr (std::endian::native == std::endian::big) {
    if constexpr (sizeof(T) == 4) v = __builtin_bswap32(v);
    else v = __builtin_bswap16(v);
  }
  return v;
}

// The upper field's sum of a half-block accumulator started at 2^15 (see above).
inline std::int32_t q4_0_half_sum(std::uint32_t acc) { return static_cast<std::int32_t>(acc) >> 16; }

void matmul_q4_0_rows4(float* POCKETLM_RESTRICT out, const unsigned char* POCKETLM_RESTRICT w,
                       const unsigned char* POCKETLM_RESTRICT xb, int n, int full) {
  if (reinterpret_cast<std::uintptr_t>(w) % 4 != 0) {  // words need 4-aligned blocks: bytes then
    interleave4::matmul_rows4<true, block_sums<true>>(out, w, xb, n, full);
    return;
  }
  const int nb = n / 32;
  const std::size_t row_bytes = static_cast<std::size_t>(nb) * kQ4_0BlockBytes;
  std::uint32_t pairs[kQ4BlocksAPass * 16];
  std::int32_t correction[kQ4BlocksAPass];
  float dx[kQ4BlocksAPass];
  for (int b0 = 0; b0 < nb; b0 += kQ4BlocksAPass) {
    const int bn = nb - b0 < kQ4BlocksAPass ? nb - b0 : kQ4BlocksAPass;
    interleave4::q4_0_pass_terms(xb, b0, bn, correction, dx,
                                 [&](int b, const std::int8_t* xq) { q4_0_pack_pairs(pairs + 16 * b, xq); });
    for (int r = 0; r < full; r += kLanes) {
      const unsigned char* chunk =
          w + static_cast<std::size_t>(r) * row_bytes + static_cast<std::size_t>(b0) * kLanes * kQ4_0BlockBytes;
      float acc[kLanes] = {0.0f, 0.0f, 0.0f, 0.0f};
      if (b0 > 0)
        for (int k = 0; k < kLanes; ++k) acc[k] = out[r + k];
      for (int b = 0; b < bn; ++b, chunk += kLanes * kQ4_0BlockBytes) {
        const std::uint32_t* p = pairs + 16 * b;
        const unsigned char* g = chunk + 2 * kLanes;
        std::int32_t s0 = -correction[b], s1 = s0, s2 = s0, s3 = s0;
        for (int half = 0; half < 2; ++half) {
          std::uint32_t a0 = 0x8000u, a1 = 0x8000u, a2 = 0x8000u, a3 = 0x8000u;
          for (int t = 0; t < 2; ++t, p += 4, g += 16) {
            a0 = q4_0_word_pairs(a0, load_le<std::uint32_t>(g), p);
            a1 = q4_0_word_pairs(a1, load_le<std::uint32_t>(g + 4), p);
            a2 = q4_0_word_pairs(a2, load_le<std::uint32_t>(g + 8), p);
            a3 = q4_0_word_pairs(a3, load_le<std::uint32_t>(g + 12), p);
          }
          s0 += q4_0_half_sum(a0);
          s1 += q4_0_half_sum(a1);
          s2 += q4_0_half_sum(a2);
          s3 += q4_0_half_sum(a3);
        }
        const std::int32_t isum[kLanes] = {s0, s1, s2, s3};
        for (int k = 0; k < kLanes; ++k)
          acc[k] = acc[k] + static_cast<float>(isum[k]) * (fp16_to_fp32(load_le<std::uint16_t>(chunk + 2 * k)) * dx[b]);
      }
      for (int k = 0; k < kLanes; ++k) out[r + k] = acc[k];
    }
  }
}

// ---- Batched GGUF Q8_0 and Q4_0 (kBatchTokens tokens per pass over the 4-row interleave) ----

// Q8_0, rows [0, full), T tokens (token i: Q8_0 blocks xb[i], outputs out[i]): each weight byte
// is loaded once against every token's activation of its column; per token block_sums's exact
// sums and matmul_rows4's float step, so its bits.
template <int T>
void q8_0_rows4_tokens(float* const* out, const unsigned char* w, const unsigned char* const* xb, int n, int full) {
  const int nb = n / 32;
  const std::size_t row_bytes = static_cast<std::size_t>(nb) * kQ8_0BlockBytes;
  for (int r = 0; r < full; r += kLanes) {
    const unsigned char* chunk = w + static_cast<std::size_t>(r) * row_bytes;
    float acc[T][kLanes] = {};
    for (int b = 0; b < nb; ++b, chunk += kLanes * kQ8_0BlockBytes) {
      const std::size_t at = static_cast<std::size_t>(b) * kQ8_0BlockBytes;
      std::int32_t s[T][kLanes] = {};
      for (int t = 0; t < 8; ++t)
        for (int c = 0; c < 4; ++c) {
          std::int32_t xv[T];
          for (int i = 0; i < T; ++i)
            xv[i] = static_cast<std::int8_t>(xb[i][at + 2 + static_cast<std::size_t>(4 * t + c)]);
          for (int k = 0; k < kLanes; ++k) {
            const std::int32_t wb = static_cast<std::int8_t>(chunk[2 * kLanes + 16 * t + 4 * k + c]);
            for (int i = 0; i < T; ++i) s[i][k] += wb * xv[i];
          }
        }
      for (int k = 0; k < kLanes; ++k) {
        const float dw = fp16_to_fp32(load_fp16(chunk + 2 * k));
        for (int i = 0; i < T; ++i)
          acc[i][k] = acc[i][k] + static_cast<float>(s[i][k]) * (dw * fp16_to_fp32(load_fp16(xb[i] + at)));
      }
    }
    for (int i = 0; i < T; ++i)
      for (int k = 0; k < kLanes; ++k) out[i][r + k] = acc[i][k];
  }
}

// Q4_0, rows [0, full) of 4-aligned blocks, T tokens: matmul_q4_0_rows4's packed pairs per token
// (its passes of blocks shortened so that T tokens' pairs take the same stack), each row's word
// of a group split into its 4 nibble-pair fields once for the T tokens. Per token its exact
// half-block sums and its float step, so its bits.
template <int T>
void q4_0_rows4_tokens(float* const* out, const unsigned char* w, const unsigned char* const* xb, int n, int full) {
  constexpr int kPass = kQ4BlocksAPass / T;
  constexpr std::uint32_t kMask = 0x000F000Fu;
  const int nb = n / 32;
  const std::size_t row_bytes = static_cast<std::size_t>(nb) * kQ4_0BlockBytes;
  std::uint32_t pairs[T][kPass * 16];
  std::int32_t correction[T][kPass];
  float dx[T][kPass];
  for (int b0 = 0; b0 < nb; b0 += kPass) {
    const int bn = nb - b0 < kPass ? nb - b0 : kPass;
    for (int i = 0; i < T; ++i)
      interleave4::q4_0_pass_terms(xb[i], b0, bn, correction[i], dx[i],
                                   [&](int b, const std::int8_t* xq) { q4_0_pack_pairs(pairs[i] + 16 * b, xq); });
    for (int r = 0; r < full; r += kLanes) {
      const unsigned char* chunk =
          w + static_cast<std::size_t>(r) * row_bytes + static_cast<std::size_t>(b0) * kLanes * kQ4_0BlockBytes;
      float acc[T][kLanes];
      for (int i = 0; i < T; ++i)
        for (int k = 0; k < kLanes; ++k) acc[i][k] = b0 > 0 ? out[i][r + k] : 0.0f;
      for (int b = 0; b < bn; ++b, chunk += kLanes * kQ4_0BlockBytes) {
        std::int32_t s[T][kLanes];
        for (int i = 0; i < T; ++i)
          for (int k = 0; k < kLanes; ++k) s[i][k] = -correction[i][b];
        for (int half = 0; half < 2; ++half) {
          std::uint32_t a[T][kLanes];
          for (auto& ai : a)
            for (auto& v : ai) v = 0x8000u;
          for (int t = 0; t < 2; ++t) {
            const int group = 2 * half + t;  // its 4 rows' words at 16 * group, its pairs at 4 * group
            for (int k = 0; k < kLanes; ++k) {
              const std::uint32_t v = load_le<std::uint32_t>(chunk + 2 * kLanes + 16 * group + 4 * k);
              const std::uint32_t f0 = v & kMask, f1 = (v >> 4) & kMask, f2 = (v >> 8) & kMask, f3 = (v >> 12) & kMask;
              for (int i = 0; i < T; ++i) {
                const std::uint32_t* p = pairs[i] + 16 * b + 4 * group;
                a[i][k] += f0 * p[0] + f1 * p[1] + f2 * p[2] + f3 * p[3];
              }
            }
          }
          for (int i = 0; i < T; ++i)
            for (int k = 0; k < kLanes; ++k) s[i][k] += q4_0_half_sum(a[i][k]);
        }
        for (int k = 0; k < kLanes; ++k) {
          const float dw = fp16_to_fp32(load_le<std::uint16_t>(chunk + 2 * k));
          for (int i = 0; i < T; ++i) acc[i][k] = acc[i][k] + static_cast<float>(s[i][k]) * (dw * dx[i][b]);
        }
      }
      for (int i = 0; i < T; ++i)
        for (int k = 0; k < kLanes; ++k) out[i][r + k] = acc[i][k];
    }
  }
}

// The batched Q8_0 and Q4_0 matmuls over the 4-row interleave: two tokens at a time through the
// kernels above, the odd one through decode's rows. Other layouts (and Q4_0 blocks that are not
// 4-aligned) take the generic path.
template <bool kQ4>
void matmul_ggml_batch(float* out, std::size_t out_stride, const Matrix& w, const ActivationBatch& x, int rows) {
  constexpr interleave4::RowsFn kOne = kQ4 ? matmul_q4_0_rows4 : interleave4::matmul_rows4<false, block_sums<false>>;
  using TokensFn = void (*)(float* const*, const unsigned char*, const unsigned char* const*, int, int);
  constexpr TokensFn kTokens = kQ4 ? q4_0_rows4_tokens<kBatchTokens> : q8_0_rows4_tokens<kBatchTokens>;
  const auto* wv = static_cast<const unsigned char*>(w.values);
  if (w.interleave != kLanes || (kQ4 && reinterpret_cast<std::uintptr_t>(wv) % 4 != 0)) {
    matmul_batch_tiled(interleave4::matmul_interleaved4<kQ4, kOne>, out, out_stride, w, x, rows);
    return;
  }
  const int full = rows / kLanes * kLanes;
  const std::size_t row_bytes = static_cast<std::size_t>(w.cols / 32) * (kQ4 ? kQ4_0BlockBytes : kQ8_0BlockBytes);
  over_tiles_and_token_groups<kBatchTokens>(full, x.count, batch_tile_rows(w), [&](int r0, int r1, int t, int m) {
    const int tile_rows = r1 - r0;
    float* o[kBatchTokens];
    token_outputs(out, out_stride, r0, t, m, o);
    const unsigned char* wt = wv + static_cast<std::size_t>(r0) * row_bytes;
    const unsigned char* xb[kBatchTokens];
    for (int i = 0; i < m; ++i) xb[i] = static_cast<const unsigned char*>(x.at(t + i).values);
    if (m == kBatchTokens)
      kTokens(o, wt, xb, w.cols, tile_rows);
    else
      kOne(o[0], wt, xb[0], w.cols, tile_rows);
  });
  for (int t = 0; t < x.count; ++t)  // the row-major tail, as decode computes it
    reference::matmul_ggml_tail<kQ4>(out + static_cast<std::size_t>(t) * out_stride, w, x.at(t), full, rows);
}

// IQ4_XS: the 4 rows' int32 sums of one sub-block, each nibble's grid value looked up in the
// 16-entry table (the grid is not linear in the nibble), a row at a time over its 4 groups of 4
// bytes. (Rows inside the column loop, sharing each activation load, let GCC unroll the whole
// nest and spill the weight bytes, each reloaded wider than stored: a stall per byte on x86.)
void iq4_xs_sub_sums(std::int32_t* POCKETLM_RESTRICT isum, const unsigned char* POCKETLM_RESTRICT q,
                     const std::int8_t* POCKETLM_RESTRICT xq) {
  for (int k = 0; k < kLanes; ++k) {
    std::int32_t s = 0;
    for (int t = 0; t < 4; ++t) {
      const unsigned char* v = q + 16 * t + 4 * k;  // row k's 4 bytes of group t
      for (int i = 0; i < 4; ++i)
        s += static_cast<std::int32_t>(kIQ4NLValues[v[i] & 0x0F]) * xq[4 * t + i] +
             static_cast<std::int32_t>(kIQ4NLValues[v[i] >> 4]) * xq[16 + 4 * t + i];
    }
    isum[k] += s;
  }
}

constexpr MatmulFn matmul_iq4_xs =
    interleave4::matmul_iq4_xs_interleaved4<interleave4::matmul_iq4_xs_rows4<iq4_xs_sub_sums>>;

}  // namespace

const Kernels& tiled4_kernels() {
  static const Kernels kTiled4 = [] {
    Kernels k = reference_kernels();
    k.name = "tiled4";
    k.matmul[type_index(TensorType::kF32)] = matmul_f32_entry<matmul_f32>;
    k.matmul[type_index(TensorType::kQ80)] = matmul_q80_table;
    if (!kVectorLoops && kBatchTokens > 1) k.matmul_batch[type_index(TensorType::kQ80)] = matmul_q80_batch;
    k.interleave[type_index(TensorType::kQ80)] = q80_interleave;
    k.interleave[type_index(TensorType::kF32)] = fixed_interleave<kLanes>;
    k.attention = attention;
    k.matmul[type_index(TensorType::kQ8_0)] = matmul_ggml<false>;
    k.matmul[type_index(TensorType::kQ4_0)] = interleave4::matmul_interleaved4<true, matmul_q4_0_rows4>;
    k.interleave[type_index(TensorType::kQ8_0)] = fixed_interleave<kLanes>;
    k.interleave[type_index(TensorType::kQ4_0)] = fixed_interleave<kLanes>;
    if (!kVectorLoops && kBatchTokens > 1) {
      k.matmul_batch[type_index(TensorType::kQ8_0)] = matmul_ggml_batch<false>;
      k.matmul_batch[type_index(TensorType::kQ4_0)] = matmul_ggml_batch<true>;
    }
    k.matmul[type_index(TensorType::kIQ4_XS)] = matmul_iq4_xs;
    k.interleave[type_index(TensorType::kIQ4_XS)] = fixed_interleave<kLanes>;
    return k;
  }();
  return kTiled4;
}

}  // namespace pocketlm
