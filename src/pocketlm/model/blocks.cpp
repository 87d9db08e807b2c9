#include "pocketlm/model/blocks.h"

#include "pocketlm/base/checked.h"
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

Status BlockOps::carve(const ModelSpec& spec, const Kernels& kernels, Arena& arena) {
  k_ = &kernels;
  eps_ = spec.config.rms_eps;
  const auto dim = static_cast<std::uint64_t>(spec.config.dim);
  const auto hidden = static_cast<std::uint64_t>(spec.config.hidden_dim);
  const std::uint64_t widest = dim > hidden ? dim : hidden;
  for (int i = 0; i < spec.tensor_count(); ++i) {
    const TensorInfo t = spec.tensor(i);
    if (t.rows <= 1 || *role_info(t.role).region == '\0') continue;
    const TensorType act = type_traits(t.type).activation;
    const int a = type_index(act);
    if (!type_traits(act).quantize) continue;  // f32 inputs are used as they are
    const int group = block_elements(act, t.group);
    if (group_[a] == 0) {
      group_[a] = group;
      std::uint64_t values = 0, scales = 0;
      if (!activation_row_bytes(act, widest, group, &values, &scales))
        return Status::error(StatusCode::kBadFormat, "tensor %s: group size %d does not divide %llu",
                             role_name(t.role), group, static_cast<unsigned long long>(widest));
      unsigned char* v = nullptr;
      POCKETLM_TRY(carve_array(arena, region::kActivations, values, &v));
      input_values_[a] = v;
      POCKETLM_TRY(carve_array(arena, region::kActivations, scales / sizeof(float), &input_scales_[a]));
    } else if (group_[a] != group) {
      return Status::error(StatusCode::kUnsupported, "tensor %s: group size %d differs from the model's %d",
                           role_name(t.role), group, group_[a]);
    }
  }
  return Status();
}

void BlockOps::matmul_rows(const MatmulOp& op, int r0, int r1) const {
  const TensorType act = type_traits(op.w->type).activation;
  k_->matmul[type_index(op.w->type)](op.out + r0, rows_from(*op.w, r0), input_[type_index(act)], r1 - r0);
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

void BlockOps::matmuls(const MatmulOp* ops, int count, const float* x, int n) {
  // The input in every activation type these matmuls read, each quantized once.
  input_[type_index(TensorType::kF32)] = Activation{x, nullptr, n, 0};
  bool done[kTensorTypeCount] = {};
  for (int i = 0; i < count; ++i) {
    const int a = type_index(type_traits(ops[i].w->type).activation);
    if (done[a] || !k_->quantize_act[a]) continue;
    k_->quantize_act[a](x, n, group_[a], input_values_[a], input_scales_[a]);
    input_[a] = Activation{input_values_[a], input_scales_[a], n, group_[a]};
    done[a] = true;
  }
  // Resident ops go out together; a streamed one block by block, in order, each block over
  // the workers, while the next block is read.
  MatmulOp resident[3];
  int n_resident = 0;
  for (int i = 0; i < count; ++i)
    if (!ops[i].w->stream) resident[n_resident++] = ops[i];
  if (n_resident) dispatch(resident, n_resident);
  for (int i = 0; i < count; ++i) {
    if (!ops[i].w->stream) continue;
    for (int r0 = 0; r0 < ops[i].w->rows;) {
      const Matrix block = source_->stream_rows(*ops[i].w, r0);
      const MatmulOp op{ops[i].out + r0, &block};
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
  MatmulJob job{this, ops, RowSplit(op_rows, count, workers), {op_rows[0], op_rows[1], op_rows[2]}};
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
  run_attention(args.key_cache16 ? k_->attention_f16 : k_->attention, false, args);
}

void BlockOps::attention_batch(const AttentionArgs& args) {
  if (args.key_cache16 || !k_->attention_batch)  // then args.att is s.att, one row per head
    run_attention(args.key_cache16 ? k_->attention_f16 : k_->attention, true, args);
  else
    run_attention(k_->attention_batch, false, args);
}

void attention_block(BlockOps& ops, const LayerWeights& w, const ModelConfig& c, int seq_len, DecoderState& s, int l,
                     int pos) {
  const int dim = c.dim, kv_dim = c.kv_dim(), head_size = c.head_size();
  ops.rmsnorm(s.xb, s.x, w.rms_att.f32(), dim);
  // This position's key and value are written straight into the cache.
  const std::size_t loff = static_cast<std::size_t>(l) * static_cast<std::size_t>(seq_len) * kv_dim;
  const std::size_t at = loff + static_cast<std::size_t>(pos) * kv_dim;
  const bool f16 = s.key_cache16 != nullptr;
  float* k = f16 ? s.k_now : s.key_cache + at;
  float* v = f16 ? s.v_now : s.value_cache + at;
  const MatmulOp qkv[] = {{s.q, &w.wq}, {k, &w.wk}, {v, &w.wv}};
  ops.matmuls(qkv, 3, s.xb, dim);
  const std::size_t rope_row = static_cast<std::size_t>(pos) * static_cast<std::size_t>(head_size / 2);
  apply_rope(s.q, k, dim, kv_dim, head_size, s.rope_cos + rope_row, s.rope_sin + rope_row);
  AttentionArgs args{s.xb, s.att, s.q, f16 ? nullptr : s.key_cache + loff, f16 ? nullptr : s.value_cache + loff, pos,
                     c.n_heads, c.n_kv_heads, head_size, kv_dim, seq_len};
  if (f16) {
    for (int i = 0; i < kv_dim; ++i) {
      s.key_cache16[at + static_cast<std::size_t>(i)] = fp32_to_fp16(k[i]);
      s.value_cache16[at + static_cast<std::size_t>(i)] = fp32_to_fp16(v[i]);
    }
    args.key_cache16 = s.key_cache16 + loff;
    args.value_cache16 = s.value_cache16 + loff;
  }
  ops.attention(args);
  ops.matmul(s.xb2, w.wo, s.xb, dim);
  for (int i = 0; i < dim; ++i) s.x[i] += s.xb2[i];
}

void ffn_block(BlockOps& ops, const LayerWeights& w, const ModelConfig& c, DecoderState& s) {
  const int dim = c.dim, hidden = c.hidden_dim;
  ops.rmsnorm(s.xb, s.x, w.rms_ffn.f32(), dim);
  const MatmulOp gate_up[] = {{s.hb, &w.w1}, {s.hb2, &w.w3}};
  ops.matmuls(gate_up, 2, s.xb, dim);
  ops.kernels().swiglu(s.hb, s.hb2, hidden);
  ops.matmul(s.xb, w.w2, s.hb, hidden);
  for (int i = 0; i < dim; ++i) s.x[i] += s.xb[i];
}

}  // namespace pocketlm
