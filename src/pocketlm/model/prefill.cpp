// Batched prefill: the blocks of model/blocks.h for a block of prompt tokens. Every matmul is
// one pass over the weights for all tokens (kernels/batch.h), so a block of B tokens reads
// each weight byte once instead of B times, from RAM or from storage; everything per token
// (norms, RoPE, attention, SwiGLU, the residual adds, the activation quantization) is the
// single-token code on that token's row, so each token's bits are those of run.c.
#include "pocketlm/base/checked.h"
#include "pocketlm/kernels/batch.h"
#include "pocketlm/model/blocks.h"
#include "pocketlm/model/rope_table.h"
#include "pocketlm/model/row_split.h"

namespace pocketlm {

Status BatchState::carve(const ModelConfig& c, int seq_len, int rows, bool batched_attention, Arena& arena) {
  batch = rows > 1 ? rows : 0;
  if (batch == 0) return Status();
  std::uint64_t dim = 0, hidden = 0, scores = 0;
  if (!checked_product(&dim, static_cast<std::uint64_t>(batch), static_cast<std::uint64_t>(c.dim), 1u))
    return Status::error(StatusCode::kOutOfMemory, "prefill batch: %d tokens x dim %d overflows", batch, c.dim);
  if (!checked_product(&hidden, static_cast<std::uint64_t>(batch), static_cast<std::uint64_t>(c.hidden_dim), 1u))
    return Status::error(StatusCode::kOutOfMemory, "prefill batch: %d tokens x hidden_dim %d overflows", batch,
                         c.hidden_dim);
  if (batched_attention) {
    if (!checked_product(&scores, static_cast<std::uint64_t>(c.n_heads) * kAttentionQueryTile,
                         static_cast<std::uint64_t>(seq_len), 1u))
      return Status::error(StatusCode::kOutOfMemory,
                           "prefill batch: scores of n_heads %d x %d queries x seq_len %d overflow", c.n_heads,
                           kAttentionQueryTile, seq_len);
    POCKETLM_TRY(carve_array(arena, region::kPrefill, scores, &att));
  }
  POCKETLM_TRY(carve_array(arena, region::kPrefill, dim, &x));
  POCKETLM_TRY(carve_array(arena, region::kPrefill, dim, &xb));
  POCKETLM_TRY(carve_array(arena, region::kPrefill, dim, &xb2));
  POCKETLM_TRY(carve_array(arena, region::kPrefill, dim, &q));
  POCKETLM_TRY(carve_array(arena, region::kPrefill, hidden, &hb));
  return carve_array(arena, region::kPrefill, hidden, &hb2);
}

Status BlockOps::carve_batch(const ModelSpec& spec, int batch, Arena& arena) {
  if (batch <= 1) return Status();
  const auto dim = static_cast<std::uint64_t>(spec.config.dim);
  const auto hidden = static_cast<std::uint64_t>(spec.config.hidden_dim);
  const std::uint64_t widest = dim > hidden ? dim : hidden;
  for (int a = 0; a < kTensorTypeCount; ++a) {
    if (group_[a] == 0) continue;  // carve() found no matrix reading this activation type
    const auto act = static_cast<TensorType>(a);
    std::uint64_t values = 0, scales = 0;
    if (!activation_row_bytes(act, widest, group_[a], &values, &scales))
      return Status::error(StatusCode::kBadFormat, "prefill batch: group size %d does not divide %llu", group_[a],
                           static_cast<unsigned long long>(widest));
    // One row per token, each as wide as the widest input, so token t starts at t * row.
    unsigned char* v = nullptr;
    float* s = nullptr;
    POCKETLM_TRY(carve_array(arena, region::kPrefill, values * static_cast<std::uint64_t>(batch), &v));
    POCKETLM_TRY(carve_array(arena, region::kPrefill, scales / sizeof(float) * static_cast<std::uint64_t>(batch), &s));
    batch_input_[a] = ActivationBatch{v, s, 0, group_[a], 0, static_cast<std::size_t>(values),
                                      static_cast<std::size_t>(scales / sizeof(float))};
  }
  return Status();
}

void BlockOps::matmul_batch_rows(const BatchMatmulOp& op, int r0, int r1) const {
  const TensorType act = type_traits(op.w->type).activation;
  pocketlm::matmul_batch(*k_, op.out + r0, op.out_stride, rows_from(*op.w, r0), batch_input_[type_index(act)],
                         r1 - r0);
}

namespace {

// Cut into tasks as BlockOps::dispatch cuts (model/row_split.h).
struct BatchJob {
  const BlockOps* ops_owner;
  const BatchMatmulOp* ops;
  RowSplit split;
  int op_rows[3];
};

}  // namespace

void BlockOps::matmuls_batch(const BatchMatmulOp* ops, int count, const float* x, std::size_t x_stride, int n,
                             int tokens) {
  // Every token's input in each activation type the matmuls read, quantized once per token
  // (as matmuls() quantizes the single token's input).
  batch_input_[type_index(TensorType::kF32)] =
      ActivationBatch{x, nullptr, n, 0, tokens, x_stride * sizeof(float), 0};
  bool done[kTensorTypeCount] = {};
  for (int i = 0; i < count; ++i) {
    const int a = type_index(type_traits(ops[i].w->type).activation);
    if (done[a] || !k_->quantize_act[a]) continue;
    ActivationBatch& in = batch_input_[a];
    // The buffers are the arena's (carve_batch): writable, though an Activation reads them.
    auto* values = static_cast<unsigned char*>(const_cast<void*>(in.values));
    auto* scales = const_cast<float*>(in.scales);
    for (int t = 0; t < tokens; ++t)
      k_->quantize_act[a](x + static_cast<std::size_t>(t) * x_stride, n, group_[a],
                          values + static_cast<std::size_t>(t) * in.value_stride,
                          scales + static_cast<std::size_t>(t) * in.scale_stride);
    in.n = n;
    in.count = tokens;
    done[a] = true;
  }
  BatchMatmulOp resident[3];
  int n_resident = 0;
  for (int i = 0; i < count; ++i)
    if (!ops[i].w->stream) resident[n_resident++] = ops[i];
  if (n_resident) dispatch_batch(resident, n_resident);
  // A streamed matrix: each block is read once and serves every token before the next.
  for (int i = 0; i < count; ++i) {
    if (!ops[i].w->stream) continue;
    for (int r0 = 0; r0 < ops[i].w->rows;) {
      const Matrix block = source_->stream_rows(*ops[i].w, r0);
      const BatchMatmulOp op{ops[i].out + r0, ops[i].out_stride, &block};
      dispatch_batch(&op, 1);
      r0 += block.rows;
    }
  }
}

void BlockOps::dispatch_batch(const BatchMatmulOp* ops, int count) {
  const int workers = parallel_ ? parallel_->workers() : 1;
  if (workers == 1) {
    for (int i = 0; i < count; ++i) matmul_batch_rows(ops[i], 0, ops[i].w->rows);
    return;
  }
  int op_rows[3] = {};
  for (int i = 0; i < count; ++i) op_rows[i] = ops[i].w->rows;
  BatchJob job{this, ops, RowSplit(op_rows, count, workers), {op_rows[0], op_rows[1], op_rows[2]}};
  parallel_->run(job.split.tasks, [](void* ctx, int task) {
    const auto* j = static_cast<const BatchJob*>(ctx);
    int i = 0, r0 = 0, r1 = 0;
    j->split.locate(task, j->op_rows, &i, &r0, &r1);
    j->ops_owner->matmul_batch_rows(j->ops[i], r0, r1);
  }, &job);
}

void attention_block_batch(BlockOps& ops, const LayerWeights& w, const ModelConfig& c, int seq_len, DecoderState& s,
                           BatchState& b, int l, int pos, int count) {
  const int dim = c.dim, kv_dim = c.kv_dim(), head_size = c.head_size();
  const auto sdim = static_cast<std::size_t>(dim), skv = static_cast<std::size_t>(kv_dim);
  for (int t = 0; t < count; ++t) ops.rmsnorm(b.xb + t * sdim, b.x + t * sdim, w.rms_att.f32(), dim);
  // The block's keys and values go straight into the cache, one row per position.
  const std::size_t loff = static_cast<std::size_t>(l) * static_cast<std::size_t>(seq_len) * skv;
  float* k = s.key_cache + loff + static_cast<std::size_t>(pos) * skv;
  float* v = s.value_cache + loff + static_cast<std::size_t>(pos) * skv;
  const BatchMatmulOp qkv[] = {{b.q, sdim, &w.wq}, {k, skv, &w.wk}, {v, skv, &w.wv}};
  ops.matmuls_batch(qkv, 3, b.xb, sdim, dim, count);
  const auto half = static_cast<std::size_t>(head_size / 2);
  for (int t = 0; t < count; ++t) {
    const std::size_t rope_row = static_cast<std::size_t>(pos + t) * half;
    apply_rope(b.q + t * sdim, k + t * skv, dim, kv_dim, head_size, s.rope_cos + rope_row, s.rope_sin + rope_row);
  }
  // Causal within the block: every key up to the last token is in the cache now, and token t
  // reads positions 0..pos+t only.
  AttentionArgs args{b.xb, b.att ? b.att : s.att, b.q, s.key_cache + loff, s.value_cache + loff,
                     pos, c.n_heads, c.n_kv_heads, head_size, kv_dim, seq_len};
  args.count = count;
  args.q_stride = dim;
  ops.attention_batch(args);
  ops.matmul_batch(b.xb2, sdim, w.wo, b.xb, sdim, dim, count);
  for (std::size_t i = 0; i < static_cast<std::size_t>(count) * sdim; ++i) b.x[i] += b.xb2[i];
}

void ffn_block_batch(BlockOps& ops, const LayerWeights& w, const ModelConfig& c, BatchState& b, int count) {
  const int dim = c.dim, hidden = c.hidden_dim;
  const auto sdim = static_cast<std::size_t>(dim), shid = static_cast<std::size_t>(hidden);
  for (int t = 0; t < count; ++t) ops.rmsnorm(b.xb + t * sdim, b.x + t * sdim, w.rms_ffn.f32(), dim);
  const BatchMatmulOp gate_up[] = {{b.hb, shid, &w.w1}, {b.hb2, shid, &w.w3}};
  ops.matmuls_batch(gate_up, 2, b.xb, sdim, dim, count);
  for (int t = 0; t < count; ++t) ops.kernels().swiglu(b.hb + t * shid, b.hb2 + t * shid, hidden);
  ops.matmul_batch(b.xb, sdim, w.w2, b.hb, shid, hidden, count);
  for (std::size_t i = 0; i < static_cast<std::size_t>(count) * sdim; ++i) b.x[i] += b.xb[i];
}

}  // namespace pocketlm
