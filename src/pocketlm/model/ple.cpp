#include "pocketlm/model/ple.h"

#include <cmath>

#include "pocketlm/base/checked.h"
#include "pocketlm/format/ple_schema.h"

namespace pocketlm {

namespace {

// The per-layer block, for each row t of r, on the raw residual: g = gelu(ple_gate · x) * ple_t
// (ple_t = ple + t * ple_stride, P values), y = ple_out · g, x += rmsnorm(y) with the
// ple_post_norm weights. `gate` holds r.count rows of P floats; y and its norm use r.xb and r.xb2.
void per_layer_block(BlockOps& ops, const LayerWeights& w, const ModelConfig& c, const TokenRows& r, const float* ple,
                     std::size_t ple_stride, float* gate) {
  const int dim = c.dim, p = per_layer_dim(c);
  const auto sdim = static_cast<std::size_t>(dim), sp = static_cast<std::size_t>(p);
  const std::size_t rows_dim = static_cast<std::size_t>(r.count) * sdim;
  ops.matmul(gate, sp, w[kPleGate], r.x, sdim, dim, r.count);
  for (int t = 0; t < r.count; ++t)
    ops.kernels().gelu_gate(gate + static_cast<std::size_t>(t) * sp, ple + static_cast<std::size_t>(t) * ple_stride, p);
  ops.matmul(r.xb, sdim, w[kPleOut], gate, sp, p, r.count);
  for (std::size_t t = 0; t < rows_dim; t += sdim) ops.rmsnorm(r.xb2 + t, r.xb + t, w[kPlePostNorm].f32(), dim);
  for (std::size_t i = 0; i < rows_dim; ++i) r.x[i] += r.xb2[i];
}

}  // namespace

Status PleModel::Inputs::carve(const ModelConfig& c, int rows, const char* region, Arena& arena) {
  std::uint64_t all = 0, gates = 0;
  const auto r = static_cast<std::uint64_t>(rows);
  if (!checked_product(&all, r, static_cast<std::uint64_t>(c.n_layers), static_cast<std::uint64_t>(per_layer_dim(c))) ||
      !checked_product(&gates, r, static_cast<std::uint64_t>(per_layer_dim(c)), 1u))
    return Status::error(StatusCode::kOutOfMemory, "per-layer inputs: %d tokens x n_layers %d x per_layer_dim %d overflow",
                         rows, c.n_layers, per_layer_dim(c));
  POCKETLM_TRY(carve_array(arena, region, all, &ple));
  POCKETLM_TRY(carve_array(arena, region, all, &proj));
  return carve_array(arena, region, gates, &gate);
}

Status PleModel::carve(const ModelSpec& spec, int seq_len, const Kernels& kernels, const WeightPlacement& placement,
                       KvType kv, Arena& arena) {
  if (per_layer_dim(spec.config) <= 0)
    return Status::error(StatusCode::kBadFormat, "model of architecture '%s': per_layer_dim is %d, must be positive",
                         spec.architecture, per_layer_dim(spec.config));
  POCKETLM_TRY(Decoder::carve(spec, seq_len, kernels, placement, kv, arena));
  inv_sqrt_dim_ = 1.0f / std::sqrt(static_cast<float>(spec.config.dim));
  sqrt_p_ = std::sqrt(static_cast<float>(per_layer_dim(spec.config)));
  inv_sqrt2_ = 1.0f / std::sqrt(2.0f);
  return one_.carve(spec.config, 1, region::kActivations, arena);
}

Status PleModel::carve_prefill(int batch, Arena& arena) {
  POCKETLM_TRY(Decoder::carve_prefill(batch, arena));
  return batch > 1 ? batch_inputs_.carve(spec_->config, batch, region::kPrefill, arena) : Status();
}

void PleModel::gather_rows(const std::int32_t* tokens, int count) {
  const ModelConfig& c = spec_->config;
  const std::size_t all = static_cast<std::size_t>(c.n_layers) * static_cast<std::size_t>(per_layer_dim(c));
  float* ple = inputs(count).ple;
  for (int t = 0; t < count; ++t) weights_.row(kPleTable, tokens[t], ple + static_cast<std::size_t>(t) * all);
}

void PleModel::combine_inputs(const TokenRows& r, Inputs& in) {
  const ModelConfig& c = spec_->config;
  const int p = per_layer_dim(c);
  const std::size_t sp = static_cast<std::size_t>(p);
  const std::size_t all = static_cast<std::size_t>(c.n_layers) * sp;
  ops_.matmul(in.proj, all, weights_.global(kPleProj), r.x, static_cast<std::size_t>(c.dim), c.dim,
              r.count);
  const float* norm = weights_.global(kPleProjNorm).f32();
  for (std::size_t row = 0; row < static_cast<std::size_t>(r.count) * all; row += sp) {
    float* q = in.proj + row;
    float* ple = in.ple + row;
    for (std::size_t i = 0; i < sp; ++i) q[i] *= inv_sqrt_dim_;
    ops_.rmsnorm(q, q, norm, p);
    for (std::size_t i = 0; i < sp; ++i) ple[i] = (q[i] + ple[i] * sqrt_p_) * inv_sqrt2_;
  }
}

void PleModel::layers(const std::int32_t* /*tokens*/, const TokenRows& r, int pos) {
  const ModelConfig& c = spec_->config;
  Inputs& in = inputs(r.count);
  combine_inputs(r, in);
  const std::size_t sp = static_cast<std::size_t>(per_layer_dim(c));
  const std::size_t all = static_cast<std::size_t>(c.n_layers) * sp;
  for (int l = 0; l < c.n_layers; ++l) {
    const LayerWeights& layer = weights_.layer(l);
    attention_block(ops_, layer, c, seq_len_, state_, r, l, pos);
    ffn_block(ops_, layer, c, r);
    per_layer_block(ops_, layer, c, r, in.ple + static_cast<std::size_t>(l) * sp, all, in.gate);
  }
}

}  // namespace pocketlm
