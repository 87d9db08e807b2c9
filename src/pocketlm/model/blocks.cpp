#include "pocketlm/model/blocks.h"

#include "pocketlm/base/checked.h"
#include "pocketlm/kernels/batch.h"
#include "pocketlm/model/rope_table.h"
#include "pocketlm/model/row_split.h"
#include "pocketlm/quant/fp16.h"

namespace pocketlm {

Status DecoderState::carve(const ModelConfig& c, int seq_len, KvType kv, Arena& arena) {
  const auto dim = static_cast<std::uint64_t>(c.dim);
  const auto hidden = static_cast<std::uint64_t>(c.hidden_dim);
  const auto seq = static_cast<std::uint64_t>(seq_len);
  std::uint64_t kv_elems = 0;
  if (!checked_product(&kv_elems, static_cast<std::uint64_t>(c.n_layers), seq, static_cast<std::uint64_t>(c.kv_dim())))
    return Status::error(StatusCode::kOutOfMemory, "kv cache: n_layers %d x seq_len %d x kv_dim %d overflows",
                         c.n_layers, seq_len, c.kv_dim());
  if (kv == KvType::kF16) {
    POCKETLM_TRY(carve_array(arena, region::kKvCache, kv_elems, &key_cache16));
    POCKETLM_TRY(carve_array(arena, region::kKvCache, kv_elems, &value_cache16));
    POCKETLM_TRY(carve_array(arena, region::kActivations, static_cast<std::uint64_t>(c.kv_dim()), &k_now));
    POCKETLM_TRY(carve_array(arena, region::kActivations, static_cast<std::uint64_t>(c.kv_dim()), &v_now));
  } else {
    POCKETLM_TRY(carve_array(arena, region::kKvCache, kv_elems, &key_cache));
    POCKETLM_TRY(carve_array(arena, region::kKvCache, kv_elems, &value_cache));
  }
  POCKETLM_TRY(carve_array(arena, region::kActivations, dim, &x));
  POCKETLM_TRY(carve_array(arena, region::kActivations, dim, &xb));
  POCKETLM_TRY(carve_array(arena, region::kActivations, dim, &xb2));
  POCKETLM_TRY(carve_array(arena, region::kActivations, hidden, &hb));
  POCKETLM_TRY(carve_array(arena, region::kActivations, hidden, &hb2));
  POCKETLM_TRY(carve_array(arena, region::kActivations, dim, &q));
  POCKETLM_TRY(carve_array(arena, region::kActivations, static_cast<std::uint64_t>(c.n_heads) * seq, &att));
  POCKETLM_TRY(carve_array(arena, region::kLogits, static_cast<std::uint64_t>(c.vocab_size), &logits));
  const std::uint64_t rope_entries = seq * static_cast<std::uint64_t>(c.head_size() / 2);
  POCKETLM_TRY(carve_array(arena, region::kRope, rope_entries, &rope_cos));
  POCKETLM_TRY(carve_array(arena, region::kRope, rope_entries, &rope_sin));
  if (!arena.measuring()) fill_rope_table(seq_len, c.head_size(), c.rope_theta, rope_cos, rope_sin);
  return Status();
}

bool activation_row_bytes(TensorType act, std::uint64_t width, int group, std::uint64_t* values,
                          std::uint64_t* scales) {
  // Rounded up to whole blocks: with ggml's fixed blocks of 32, hidden_dim need not be a
  // multiple of the block when its matrix (w2) is of another type.
  const std::uint64_t g = group > 0 ? static_cast<std::uint64_t>(group) : 1;
  std::uint64_t padded = 0;
  return group > 0 && checked_add(width, (g - width % g) % g, &padded) && type_bytes(act, padded, group, values, scales);
}

std::uint64_t widest_matmul_input(const ModelSpec& spec) {
  const ModelConfig& c = spec.config;
  std::uint64_t widest = static_cast<std::uint64_t>(c.dim > c.hidden_dim ? c.dim : c.hidden_dim);
  // A kind's own matrices may read other widths (the columns of each).
  for (int i = 0; i < spec.tensor_count(); ++i) {
    const TensorInfo t = spec.tensor(i);
    if (t.schema->use == TensorUse::kMatmul && t.cols > widest) widest = t.cols;
  }
  return widest;
}

Status BlockOps::carve(const ModelSpec& spec, const Kernels& kernels, Arena& arena) {
  k_ = &kernels;
  eps_ = spec.config.rms_eps;
  const std::uint64_t widest = widest_matmul_input(spec);
  for (int i = 0; i < spec.tensor_count(); ++i) {
    const TensorInfo t = spec.tensor(i);
    if (t.rows <= 1 || *t.schema->region == '\0') continue;
    const TensorType act = type_traits(t.type).activation;
    const int a = type_index(act);
    if (!type_traits(act).quantize) continue;  // f32 inputs are used as they are
    const int group = block_elements(act, t.group);
    if (group_[a] == 0) {
      group_[a] = group;
      std::uint64_t values = 0, scales = 0;
      if (!activation_row_bytes(act, widest, group, &values, &scales))
        return Status::error(StatusCode::kBadFormat, "tensor %s: group size %d does not divide %llu",
                             t.schema->name, group, static_cast<unsigned long long>(widest));
      unsigned char* v = nullptr;
      POCKETLM_TRY(carve_array(arena, region::kActivations, values, &v));
      input_values_[a] = v;
      POCKETLM_TRY(carve_array(arena, region::kActivations, scales / sizeof(float), &input_scales_[a]));
    } else if (group_[a] != group) {
      return Status::error(StatusCode::kUnsupported, "tensor %s: group size %d differs from the model's %d",
                           t.schema->name, group, group_[a]);
    }
  }
  return Status();
}

TokenRows TokenRows::of(const DecoderState& s) { return TokenRows{1, s.x, s.xb, s.xb2, s.q, s.hb, s.hb2, s.att}; }

TokenRows TokenRows::of(const BatchState& b, const DecoderState& s, int count) {
  return TokenRows{count, b.x, b.xb, b.xb2, b.q, b.hb, b.hb2, b.att ? b.att : s.att};
}

void BlockOps::matmul_rows(const MatmulOp& op, int r0, int r1) const {
  const int a = type_index(type_traits(op.w->type).activation);
  if (tokens_ == 1)
    k_->matmul[type_index(op.w->type)](op.out + r0, rows_from(*op.w, r0), input_[a], r1 - r0);
  else
    matmul_batch(*k_, op.out + r0, op.out_stride, rows_from(*op.w, r0), batch_input_[a], r1 - r0);
}

namespace {

// Up to three matmuls of the same input go out as one job, their row blocks numbered one
// after the other: one dispatch instead of three (model/row_split.h).
struct MatmulJob {
  const BlockOps* ops_owner;
  const MatmulOp* ops;
  RowSplit split;
  int op_rows[3];
};

struct AttentionTask {
  void (*kernel)(const AttentionArgs&);
  bool per_token;
  const AttentionArgs* args;
  int heads_per_task;
};

}  // namespace

void BlockOps::matmuls(const MatmulOp* ops, int count, const float* x, std::size_t x_stride, int n, int tokens) {
  // Every token's input in each activation type these matmuls read, quantized once.
  tokens_ = tokens;
  const int f32 = type_index(TensorType::kF32);
  if (tokens == 1)
    input_[f32] = Activation{x, nullptr, n, 0};
  else
    batch_input_[f32] = ActivationBatch{x, nullptr, n, 0, tokens, x_stride * sizeof(float), 0};
  bool done[kTensorTypeCount] = {};
  for (int i = 0; i < count; ++i) {
    const int a = type_index(type_traits(ops[i].w->type).activation);
    if (done[a] || !k_->quantize_act[a]) continue;
    done[a] = true;
    if (tokens == 1) {
      k_->quantize_act[a](x, n, group_[a], input_values_[a], input_scales_[a]);
      input_[a] = Activation{input_values_[a], input_scales_[a], n, group_[a]};
      continue;
    }
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
  }
  // Resident ops go out together; a streamed one block by block, in order, each block over
  // the workers (and every token) while the next block is read.
  MatmulOp resident[3];
  int n_resident = 0;
  for (int i = 0; i < count; ++i)
    if (!ops[i].w->stream) resident[n_resident++] = ops[i];
  if (n_resident) dispatch(resident, n_resident);
  for (int i = 0; i < count; ++i) {
    if (!ops[i].w->stream) continue;
    for (int r0 = 0; r0 < ops[i].w->rows;) {
      const Matrix block = source_->stream_rows(*ops[i].w, r0);
      const MatmulOp op{ops[i].out + r0, &block, ops[i].out_stride};
      dispatch(&op, 1);
      r0 += block.rows;
    }
  }
}

void BlockOps::dispatch(const MatmulOp* ops, int count) {
  const int workers = parallel_ ? parallel_->workers() : 1;
  if (workers == 1) {
    for (int i = 0; i < count; ++i) matmul_rows(ops[i], 0, ops[i].w->rows);
    return;
  }
  int op_rows[3] = {};
  for (int i = 0; i < count; ++i) op_rows[i] = ops[i].w->rows;
  // A token's matmuls stream their weights: one long run of rows per worker keeps each core's
  // prefetchers going (two threads decoding synth110M Q4_0 from DRAM: 1.4x the tok/s of four
  // shorter tasks each; bench/README.md). A batch computes far more per byte read: four tasks
  // per worker even out the workers' finishing times.
  const int per_worker = tokens_ == 1 ? 1 : 4;
  MatmulJob job{this, ops, RowSplit(op_rows, count, workers, per_worker), {op_rows[0], op_rows[1], op_rows[2]}};
  parallel_->run(job.split.tasks, [](void* ctx, int task) {
    const auto* j = static_cast<const MatmulJob*>(ctx);
    int i = 0, r0 = 0, r1 = 0;
    j->split.locate(task, j->op_rows, &i, &r0, &r1);
    j->ops_owner->matmul_rows(j->ops[i], r0, r1);
  }, &job);
}

namespace {

// One task's heads: the kernel over the block's queries, or, for a kernel of one query, that
// kernel once per token (token i at pos + i, its q and out rows q_stride further).
void attention_heads(void (*kernel)(const AttentionArgs&), bool per_token, const AttentionArgs& args) {
  if (!per_token) {
    kernel(args);
    return;
  }
  AttentionArgs one = args;
  one.count = 1;
  for (int i = 0; i < args.count; ++i) {
    one.q = args.q + static_cast<std::size_t>(i) * static_cast<std::size_t>(args.q_stride);
    one.out = args.out + static_cast<std::size_t>(i) * static_cast<std::size_t>(args.q_stride);
    one.pos = args.pos + i;
    kernel(one);
  }
}

}  // namespace

void BlockOps::run_attention(void (*kernel)(const AttentionArgs&), bool per_token, const AttentionArgs& args) {
  const int workers = parallel_ ? parallel_->workers() : 1;
  if (workers == 1 || args.n_heads == 1) {
    attention_heads(kernel, per_token, args);
    return;
  }
  const int per_task = (args.n_heads + workers - 1) / workers;
  AttentionTask task{kernel, per_token, &args, per_task};
  parallel_->run((args.n_heads + per_task - 1) / per_task, [](void* ctx, int i) {
    const auto* t = static_cast<const AttentionTask*>(ctx);
    AttentionArgs part = *t->args;
    part.head_begin = i * t->heads_per_task;
    part.head_end = part.head_begin + t->heads_per_task < part.n_heads ? part.head_begin + t->heads_per_task
                                                                         : part.n_heads;
    attention_heads(t->kernel, t->per_token, part);
  }, &task);
}

void BlockOps::attention(const AttentionArgs& args) {
  if (args.key_cache16)
    run_attention(k_->attention_f16, args.count > 1, args);
  else if (args.count == 1)
    run_attention(k_->attention, false, args);
  else if (k_->attention_batch)
    run_attention(k_->attention_batch, false, args);
  else  // args.att is then s.att, one row per head, reused token after token
    run_attention(k_->attention, true, args);
}

void attention_block(BlockOps& ops, const LayerWeights& w, const ModelConfig& c, int seq_len, DecoderState& s,
                     const TokenRows& r, int l, int pos) {
  using R = TensorRole;
  const int dim = c.dim, kv_dim = c.kv_dim(), head_size = c.head_size();
  const auto sdim = static_cast<std::size_t>(dim), skv = static_cast<std::size_t>(kv_dim);
  const std::size_t rows_dim = static_cast<std::size_t>(r.count) * sdim;
  for (std::size_t t = 0; t < rows_dim; t += sdim) ops.rmsnorm(r.xb + t, r.x + t, w[R::kRmsAtt].f32(), dim);
  // The rows' keys and values are written straight into the cache, one row per position (an
  // f16 cache: this one position's, rounded into it below).
  const std::size_t loff = static_cast<std::size_t>(l) * static_cast<std::size_t>(seq_len) * skv;
  const std::size_t at = loff + static_cast<std::size_t>(pos) * skv;
  const bool f16 = s.key_cache16 != nullptr;
  float* k = f16 ? s.k_now : s.key_cache + at;
  float* v = f16 ? s.v_now : s.value_cache + at;
  const MatmulOp qkv[] = {{r.q, &w[R::kWq], sdim}, {k, &w[R::kWk], skv}, {v, &w[R::kWv], skv}};
  ops.matmuls(qkv, 3, r.xb, sdim, dim, r.count);
  const auto half = static_cast<std::size_t>(head_size / 2);
  for (int t = 0; t < r.count; ++t) {
    const std::size_t rope_row = static_cast<std::size_t>(pos + t) * half;
    apply_rope(r.q + t * sdim, k + t * skv, dim, kv_dim, head_size, s.rope_cos + rope_row, s.rope_sin + rope_row);
  }
  // Causal within the rows: every key up to the last token is in the cache now, and token t
  // reads positions 0..pos+t only.
  AttentionArgs args{r.xb, r.att, r.q, f16 ? nullptr : s.key_cache + loff, f16 ? nullptr : s.value_cache + loff,
                     pos, c.n_heads, c.n_kv_heads, head_size, kv_dim, seq_len};
  args.count = r.count;
  args.q_stride = dim;
  if (f16) {
    for (int i = 0; i < kv_dim; ++i) {
      s.key_cache16[at + static_cast<std::size_t>(i)] = fp32_to_fp16(k[i]);
      s.value_cache16[at + static_cast<std::size_t>(i)] = fp32_to_fp16(v[i]);
    }
    args.key_cache16 = s.key_cache16 + loff;
    args.value_cache16 = s.value_cache16 + loff;
  }
  ops.attention(args);
  ops.matmul(r.xb2, sdim, w[R::kWo], r.xb, sdim, dim, r.count);
  for (std::size_t i = 0; i < rows_dim; ++i) r.x[i] += r.xb2[i];
}

void ffn_block(BlockOps& ops, const LayerWeights& w, const ModelConfig& c, const TokenRows& r) {
  using R = TensorRole;
  const int dim = c.dim, hidden = c.hidden_dim;
  const auto sdim = static_cast<std::size_t>(dim), shid = static_cast<std::size_t>(hidden);
  const std::size_t rows_dim = static_cast<std::size_t>(r.count) * sdim;
  for (std::size_t t = 0; t < rows_dim; t += sdim) ops.rmsnorm(r.xb + t, r.x + t, w[R::kRmsFfn].f32(), dim);
  const MatmulOp gate_up[] = {{r.hb, &w[R::kW1], shid}, {r.hb2, &w[R::kW3], shid}};
  ops.matmuls(gate_up, 2, r.xb, sdim, dim, r.count);
  for (int t = 0; t < r.count; ++t) ops.kernels().swiglu(r.hb + t * shid, r.hb2 + t * shid, hidden);
  ops.matmul(r.xb, sdim, w[R::kW2], r.hb, shid, hidden, r.count);
  for (std::size_t i = 0; i < rows_dim; ++i) r.x[i] += r.xb[i];
}

}  // namespace pocketlm
