// The reference backend: llama2.c's run.c/runq.c loops, statement for statement, so that
// with -ffp-contract=off every float operation happens in the same order and rounding.
#include <bit>
#include <cmath>
#include <cstring>

#include "pocketlm/kernels/gelu.h"
#include "pocketlm/kernels/reference.h"
#include "pocketlm/quant/fp16.h"
#include "pocketlm/quant/iq4_xs.h"
#include "pocketlm/quant/q4_0.h"
#include "pocketlm/quant/q8_0.h"
#include "pocketlm/quant/q80.h"

namespace pocketlm {

namespace reference {

void matmul_f32(float* out, const float* x, const float* w, int n, int d) {
  for (int i = 0; i < d; ++i) {
    const float* row = w + static_cast<std::size_t>(i) * n;
    float val = 0.0f;
    for (int j = 0; j < n; ++j) val += row[j] * x[j];
    out[i] = val;
  }
}

void matmul_q80(float* out, const std::int8_t* xq, const float* xs, const std::int8_t* wq, const float* ws, int n,
                int d, int gs) {
  for (int i = 0; i < d; ++i) {
    const std::size_t in = static_cast<std::size_t>(i) * n;
    float val = 0.0f;
    for (int j = 0; j <= n - gs; j += gs) {
      std::int32_t ival = 0;
      for (int k = 0; k < gs; ++k)
        ival += static_cast<std::int32_t>(xq[j + k]) * static_cast<std::int32_t>(wq[in + j + k]);
      val += static_cast<float>(ival) * ws[(in + j) / gs] * xs[j / gs];
    }
    out[i] = val;
  }
}

void matmul_f16(float* out, const Matrix& w, const Activation& x, int rows) {
  const int n = w.cols;
  const auto* h = static_cast<const std::uint16_t*>(w.values);
  const float* xv = x.f32();
  for (int i = 0; i < rows; ++i) {
    const std::uint16_t* row = h + static_cast<std::size_t>(i) * n;
    float val = 0.0f;
    for (int j = 0; j < n; ++j) val += fp16_to_fp32(row[j]) * xv[j];
    out[i] = val;
  }
}

void matmul_q8_0(float* out, const Matrix& w, const Activation& x, int rows) {
  const int nb = w.cols / kQ8_0Block;
  const auto* wb = static_cast<const unsigned char*>(w.values);
  const auto* xb = static_cast<const unsigned char*>(x.values);
  for (int i = 0; i < rows; ++i) {
    const unsigned char* row = wb + static_cast<std::size_t>(i) * nb * kQ8_0BlockBytes;
    float acc = 0.0f;
    for (int b = 0; b < nb; ++b) {
      const unsigned char* wblk = row + static_cast<std::size_t>(b) * kQ8_0BlockBytes;
      const unsigned char* xblk = xb + static_cast<std::size_t>(b) * kQ8_0BlockBytes;
      const auto* wq = reinterpret_cast<const std::int8_t*>(wblk + 2);
      const auto* xq = reinterpret_cast<const std::int8_t*>(xblk + 2);
      std::int32_t isum = 0;
      for (int k = 0; k < kQ8_0Block; ++k) isum += static_cast<std::int32_t>(wq[k]) * static_cast<std::int32_t>(xq[k]);
      acc += static_cast<float>(isum) * (fp16_to_fp32(load_fp16(wblk)) * fp16_to_fp32(load_fp16(xblk)));
    }
    out[i] = acc;
  }
}

void matmul_q4_0(float* out, const Matrix& w, const Activation& x, int rows) {
  const int nb = w.cols / kQ4_0Block;
  const auto* wb = static_cast<const unsigned char*>(w.values);
  const auto* xb = static_cast<const unsigned char*>(x.values);
  for (int i = 0; i < rows; ++i) {
    const unsigned char* row = wb + static_cast<std::size_t>(i) * nb * kQ4_0BlockBytes;
    float acc = 0.0f;
    for (int b = 0; b < nb; ++b) {
      const unsigned char* wblk = row + static_cast<std::size_t>(b) * kQ4_0BlockBytes;
      const unsigned char* xblk = xb + static_cast<std::size_t>(b) * kQ8_0BlockBytes;
      const auto* xq = reinterpret_cast<const std::int8_t*>(xblk + 2);
      std::int32_t isum = 0;
      for (int k = 0; k < 16; ++k) {
        isum += (static_cast<std::int32_t>(wblk[2 + k] & 0x0F) - 8) * static_cast<std::int32_t>(xq[k]);
        isum += (static_cast<std::int32_t>(wblk[2 + k] >> 4) - 8) * static_cast<std::int32_t>(xq[k + 16]);
      }
      acc += static_cast<float>(isum) * (fp16_to_fp32(load_fp16(wblk)) * fp16_to_fp32(load_fp16(xblk)));
    }
    out[i] = acc;
  }
}

void matmul_iq4_xs(float* out, const Matrix& w, const Activation& x, int rows) {
  const int nb = w.cols / kIQ4_XSBlock;
  const auto* wb = static_cast<const unsigned char*>(w.values);
  const auto* xb = static_cast<const unsigned char*>(x.values);
  for (int i = 0; i < rows; ++i) {
    const unsigned char* row = wb + static_cast<std::size_t>(i) * nb * kIQ4_XSBlockBytes;
    float acc = 0.0f;
    for (int b = 0; b < nb; ++b) {
      const unsigned char* wblk = row + static_cast<std::size_t>(b) * kIQ4_XSBlockBytes;
      const float d_w = fp16_to_fp32(load_fp16(wblk));
      for (int ib = 0; ib < kIQ4_XSBlock / kIQ4_XSSubBlock; ++ib) {
        const unsigned char* qs = wblk + kIQ4_XSScaleBytes + 16 * ib;
        const unsigned char* xblk = xb + (static_cast<std::size_t>(b) * 8 + ib) * kQ8_0BlockBytes;
        const auto* xq = reinterpret_cast<const std::int8_t*>(xblk + 2);
        std::int32_t isum = 0;
        for (int k = 0; k < 16; ++k) {
          isum += static_cast<std::int32_t>(kIQ4NLValues[qs[k] & 0x0F]) * static_cast<std::int32_t>(xq[k]);
          isum += static_cast<std::int32_t>(kIQ4NLValues[qs[k] >> 4]) * static_cast<std::int32_t>(xq[k + 16]);
        }
        const float dl = d_w * static_cast<float>(iq4_xs_scale(wblk, ib) - 32);
        acc += static_cast<float>(isum) * (dl * fp16_to_fp32(load_fp16(xblk)));
      }
    }
    out[i] = acc;
  }
}

void quantize_q8_0_act(const float* x, int n, int, void* values, float*) {
  quantize_q8_0(x, static_cast<std::size_t>(n), values);
}

void rmsnorm(float* out, const float* x, const float* w, int n, float eps) {
  float ss = 0.0f;
  for (int j = 0; j < n; ++j) ss += x[j] * x[j];
  ss /= static_cast<float>(n);
  ss += eps;
  ss = 1.0f / std::sqrt(ss);
  for (int j = 0; j < n; ++j) out[j] = w[j] * (ss * x[j]);
}

void softmax_over(float* x, int n, ExpSumFn exp_sum) {
  float max_val = x[0];
  for (int i = 1; i < n; ++i)
    if (x[i] > max_val) max_val = x[i];
  const float sum = exp_sum(x, n, max_val);
  for (int i = 0; i < n; ++i) x[i] /= sum;
}

void softmax(float* x, int n) { softmax_over(x, n, exp_sum); }

void exp(float* x, int n) {
  for (int i = 0; i < n; ++i) x[i] = std::exp(x[i]);
}

float exp_sum(float* x, int n, float max) {
  float sum = 0.0f;
  for (int i = 0; i < n; ++i) {
    x[i] = std::exp(x[i] - max);
    sum += x[i];
  }
  return sum;
}

int compact_at_least(const float* x, int n, float threshold, std::uint32_t* out) {
  // Every value is written, only kept ones advance count (count <= i keeps it in bounds).
  int count = 0;
  for (int i = 0; i < n; ++i) {
    out[count] = std::bit_cast<std::uint32_t>(x[i]);
    count += x[i] >= threshold;
  }
  return count;
}

void rope(float* q, float* k, int dim, int kv_dim, int head_size, int pos) {
  for (int i = 0; i < dim; i += 2) {
    const int head_dim = i % head_size;
    const float freq = 1.0f / std::pow(10000.0f, static_cast<float>(head_dim) / static_cast<float>(head_size));
    const float val = static_cast<float>(pos) * freq;
    const float fcr = std::cos(val);
    const float fci = std::sin(val);
    const int rotn = i < kv_dim ? 2 : 1;  // queries always, keys while i < kv_dim
    for (int v = 0; v < rotn; ++v) {
      float* vec = v == 0 ? q : k;
      const float v0 = vec[i];
      const float v1 = vec[i + 1];
      vec[i] = v0 * fcr - v1 * fci;
      vec[i + 1] = v0 * fci + v1 * fcr;
    }
  }
}

namespace {

inline float widen(float x) { return x; }
inline float widen(std::uint16_t h) { return fp16_to_fp32(h); }  // exact

// run.c's attention over a cache of T (f32, or binary16 widened exactly on read), statement for
// statement: scores in index order, softmax, then the weighted sum of values in position order.
template <typename T>
void attention_over(const AttentionArgs& a, const T* key_cache, const T* value_cache) {
  const int kv_mul = a.n_heads / a.n_kv_heads;
  const float scale = std::sqrt(static_cast<float>(a.head_size));
  const int head_end = a.head_end < 0 ? a.n_heads : a.head_end;
  for (int h = a.head_begin; h < head_end; ++h) {
    const float* q = a.q + h * a.head_size;
    float* att = a.att + static_cast<std::size_t>(h) * a.att_stride;
    const std::size_t kv_off = static_cast<std::size_t>(h / kv_mul) * a.head_size;
    for (int t = 0; t <= a.pos; ++t) {
      const T* k = key_cache + static_cast<std::size_t>(t) * a.kv_dim + kv_off;
      float score = 0.0f;
      for (int i = 0; i < a.head_size; ++i) score += q[i] * widen(k[i]);
      score /= scale;
      att[t] = score;
    }
    softmax(att, a.pos + 1);
    float* xb = a.out + h * a.head_size;
    std::memset(xb, 0, static_cast<std::size_t>(a.head_size) * sizeof(float));
    for (int t = 0; t <= a.pos; ++t) {
      const T* v = value_cache + static_cast<std::size_t>(t) * a.kv_dim + kv_off;
      const float w = att[t];
      for (int i = 0; i < a.head_size; ++i) xb[i] += w * widen(v[i]);
    }
  }
}

}  // namespace

void attention(const AttentionArgs& a) { attention_over(a, a.key_cache, a.value_cache); }

// attention() with the cache values read from binary16 (exact widening), same order.
void attention_f16(const AttentionArgs& a) { attention_over(a, a.key_cache16, a.value_cache16); }

void swiglu(float* hb, const float* hb2, int n) {
  for (int i = 0; i < n; ++i) {
    float val = hb[i];
    // run.c: val *= 1 / (1 + expf(-val)). For -val past kSiluExpLimit expf overflows to inf,
    // which a PSP's FPU traps on; there 1 / (1 + inf) is 0, so multiplying by 0.0f gives the
    // same bits (a signed zero) without the overflow.
    val *= -val > kSiluExpLimit ? 0.0f : (1.0f / (1.0f + std::exp(-val)));
    val *= hb2[i];
    hb[i] = val;
  }
}

void gelu_gate(float* g, const float* m, int n) {
  for (int i = 0; i < n; ++i) g[i] = gelu(g[i]) * m[i];
}

}  // namespace reference

const Kernels& reference_kernels() {
  using namespace reference;
  static const Kernels kReference = [] {
    Kernels k{};
    k.name = "reference";
    k.matmul[type_index(TensorType::kF32)] = matmul_f32_entry<matmul_f32>;
    k.matmul[type_index(TensorType::kQ80)] = matmul_q80_entry<matmul_q80>;
    k.quantize_act[type_index(TensorType::kQ80)] = quantize_q80_entry<quantize_q80_activations>;
    k.matmul[type_index(TensorType::kF16)] = matmul_f16;
    k.matmul[type_index(TensorType::kQ8_0)] = matmul_q8_0;
    k.matmul[type_index(TensorType::kQ4_0)] = matmul_q4_0;
    k.matmul[type_index(TensorType::kIQ4_XS)] = matmul_iq4_xs;
    k.quantize_act[type_index(TensorType::kQ8_0)] = quantize_q8_0_act;
    k.rmsnorm = rmsnorm;
    k.softmax = softmax;
    k.exp = exp;
    k.exp_sum = exp_sum;
    k.compact_at_least = compact_at_least;
    k.attention = attention;
    k.attention_f16 = attention_f16;
    k.swiglu = swiglu;
    k.gelu_gate = gelu_gate;
    return k;
  }();
  return kReference;
}

}  // namespace pocketlm
