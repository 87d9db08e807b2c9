// A firmware program that checks every backend of this build (reference, tiled4, cortex_m4)
// against the reference kernels on the Cortex-M4F itself: the integer matmuls (q80 at several
// group sizes, Q8_0, Q4_0, IQ4_XS) and fp32, over ragged and whole shapes with deterministic random
// weights, each stored the way the backend reads it (its load-time interleave), compared bit
// for bit. The golden runs cover the backends on real models; this covers the shapes and group
// sizes those models do not have (Q8_0 is in none of them; IQ4_XS only as a row-gather table). `make test-bare-metal` runs it.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <initializer_list>

#include "pocketlm/kernels/kernels.h"
#include "pocketlm/quant/fp16.h"
#include "pocketlm/quant/q80.h"
#include "pocketlm/quant/q80_interleave.h"
#include "pocketlm/quant/q8_0.h"
#include "pocketlm/quant/row_interleave.h"
#include "pocketlm/quant/tensor_type.h"

namespace {

using namespace pocketlm;

constexpr int kMaxRows = 64, kMaxCols = 288;
constexpr std::size_t kMaxValues = static_cast<std::size_t>(kMaxRows) * kMaxCols;

// Inputs and outputs, static: the firmware has no heap.
float g_x[kMaxCols], g_f32[kMaxValues], g_f32_packed[kMaxValues], g_want[kMaxRows], g_got[kMaxRows];
std::int8_t g_wq[kMaxValues], g_wq_packed[kMaxValues], g_xq[kMaxCols];
float g_ws[kMaxValues], g_ws_packed[kMaxValues], g_xs[kMaxCols];
unsigned char g_blocks[kMaxValues / 32 * kQ8_0BlockBytes], g_blocks_packed[kMaxValues / 32 * kQ8_0BlockBytes],
    g_xblocks[kMaxCols / 32 * kQ8_0BlockBytes];

std::uint32_t g_rng = 12345;
std::uint32_t next() {  // xorshift32
  g_rng ^= g_rng << 13;
  g_rng ^= g_rng >> 17;
  g_rng ^= g_rng << 5;
  return g_rng;
}
float uniform(float scale) { return (static_cast<float>(next() >> 8) / 8388608.0f - 1.0f) * scale; }

int g_cases = 0, g_failed = 0;

void compare(const char* backend, const char* what, int d, int n, int gs) {
  ++g_cases;
  if (std::memcmp(g_want, g_got, static_cast<std::size_t>(d) * sizeof(float)) == 0) return;
  ++g_failed;
  for (int r = 0; r < d; ++r)
    if (std::memcmp(&g_want[r], &g_got[r], sizeof(float)) != 0) {
      std::printf("error: %s %s d=%d n=%d gs=%d: row %d differs from reference\n", backend, what, d, n, gs, r);
      return;
    }
}

void check_f32(const Kernels& ref, const Kernels& k, int d, int n) {
  for (int i = 0; i < d * n; ++i) g_f32[i] = uniform(1.0f);
  for (int j = 0; j < n; ++j) g_x[j] = uniform(2.0f);
  const Activation act{g_x, nullptr, n, 0};
  ref.matmul[type_index(TensorType::kF32)](g_want, Matrix{TensorType::kF32, d, n, g_f32, nullptr, 0, 1}, act, d);
  const int il = interleave_of(k, TensorType::kF32, 0);
  for (int r = 0; r < d; ++r)
    for (int j = 0; j < n; ++j)
      g_f32_packed[interleaved_index(static_cast<std::size_t>(r), static_cast<std::size_t>(j),
                                     static_cast<std::size_t>(n), static_cast<std::size_t>(d),
                                     static_cast<std::size_t>(il))] = g_f32[static_cast<std::size_t>(r) * n + j];
  k.matmul[type_index(TensorType::kF32)](g_got, Matrix{TensorType::kF32, d, n, g_f32_packed, nullptr, 0, il}, act, d);
  compare(k.name, "f32", d, n, 0);
}

void check_q80(const Kernels& ref, const Kernels& k, int d, int n, int gs) {
  for (int i = 0; i < d * n; ++i) g_wq[i] = static_cast<std::int8_t>(static_cast<int>(next() % 255) - 127);
  for (int i = 0; i < d * n / gs; ++i) g_ws[i] = uniform(0.02f);
  for (int j = 0; j < n; ++j) g_x[j] = uniform(3.0f);
  quantize_q80_activations(g_x, n, gs, g_xq, g_xs);
  const Activation act{g_xq, g_xs, n, gs};
  ref.matmul[type_index(TensorType::kQ80)](g_want, Matrix{TensorType::kQ80, d, n, g_wq, g_ws, gs, 1}, act, d);
  const int il = interleave_of(k, TensorType::kQ80, gs);
  std::memcpy(g_wq_packed, g_wq, static_cast<std::size_t>(d) * n);
  std::memcpy(g_ws_packed, g_ws, static_cast<std::size_t>(d) * n / gs * sizeof(float));
  for (int r = 0; il > 1 && r + il <= d; r += il) {
    const std::size_t off = static_cast<std::size_t>(r) * n;
    interleave_q80_block(g_wq_packed + off, g_ws_packed + off / gs, g_wq + off, g_ws + off / gs,
                         static_cast<std::size_t>(n), static_cast<std::size_t>(gs), static_cast<std::size_t>(il));
  }
  k.matmul[type_index(TensorType::kQ80)](g_got, Matrix{TensorType::kQ80, d, n, g_wq_packed, g_ws_packed, gs, il}, act,
                                         d);
  compare(k.name, "q80", d, n, gs);
}

// Random blocks: a fp16 scale (IQ4_XS: d) of varied size, every other byte random (IQ4_XS: its
// sub-block scales too).
void check_blocks(const Kernels& ref, const Kernels& k, TensorType type, int d, int n) {
  const int be = block_elements(type, 0);
  const std::size_t bs = row_value_bytes(type, static_cast<std::size_t>(be), 0);
  const std::size_t blocks = static_cast<std::size_t>(d) * n / be;
  for (std::size_t b = 0; b < blocks; ++b) {
    unsigned char* blk = g_blocks + b * bs;
    store_fp16(blk, fp32_to_fp16(uniform(0.05f)));
    for (std::size_t i = 2; i < bs; ++i) blk[i] = static_cast<unsigned char>(next());
  }
  for (int j = 0; j < n; ++j) g_x[j] = uniform(4.0f);
  ref.quantize_act[type_index(TensorType::kQ8_0)](g_x, n, 32, g_xblocks, nullptr);
  const Activation act{g_xblocks, nullptr, n, 32};
  ref.matmul[type_index(type)](g_want, Matrix{type, d, n, g_blocks, nullptr, 0, 1}, act, d);
  const int il = interleave_of(k, type, 0);
  const std::size_t rb = row_value_bytes(type, static_cast<std::size_t>(n), 0);
  std::memcpy(g_blocks_packed, g_blocks, blocks * bs);
  for (int r = 0; il > 1 && r + il <= d; r += il)
    type_traits(type).interleave_rows(g_blocks_packed + static_cast<std::size_t>(r) * rb, nullptr,
                                      g_blocks + static_cast<std::size_t>(r) * rb, nullptr, static_cast<std::size_t>(n),
                                      32, static_cast<std::size_t>(il));
  k.matmul[type_index(type)](g_got, Matrix{type, d, n, g_blocks_packed, nullptr, 0, il}, act, d);
  compare(k.name, type_name(type), d, n, 32);
}

}  // namespace

int main() {
  const Kernels& ref = reference_kernels();
  const int rows[] = {1, 3, 4, 7, 13, 64};
  const int cols[] = {96, 288};  // multiples of 32, 12 and 4
  for (const char* const* name = kernel_names(); *name; ++name) {
    const Kernels* k = find_kernels(*name);
    if (!k) continue;
    for (int d : rows)
      for (int n : cols) {
        check_f32(ref, *k, d, n);
        for (int gs : {4, 12, 32, 96}) check_q80(ref, *k, d, n, gs);
        check_blocks(ref, *k, TensorType::kQ8_0, d, n);
        check_blocks(ref, *k, TensorType::kQ4_0, d, n);
      }
    for (int d : rows) check_blocks(ref, *k, TensorType::kIQ4_XS, d, 256);  // whole super-blocks
  }
  std::printf("kernel check: %d cases of %s, %d differ from reference (default backend %s)\n", g_cases,
              "f32, q80 (gs 4, 12, 32, 96), Q8_0, Q4_0, IQ4_XS", g_failed, default_kernels().name);
  return g_failed == 0 ? 0 : 1;
}
