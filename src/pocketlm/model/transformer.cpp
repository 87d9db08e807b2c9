#include "pocketlm/model/transformer.h"

#include <cstring>

#include "pocketlm/base/checked.h"
#include "pocketlm/kernels/q80_interleave.h"
#include "pocketlm/kernels/row_interleave.h"
#include "pocketlm/model/rope_table.h"
#include "pocketlm/quant/q80.h"

namespace pocketlm {

namespace {

const char* region_of(TensorKind kind) {
  switch (kind) {
    case TensorKind::kTokenEmbedding: return region::kEmbedding;
    case TensorKind::kWq: case TensorKind::kWk: case TensorKind::kWv: case TensorKind::kWo:
      return region::kAttention;
    case TensorKind::kW1: case TensorKind::kW2: case TensorKind::kW3: return region::kFfn;
    case TensorKind::kWcls: return region::kClassifier;
    default: return region::kNorms;
  }
}

// count * elem_bytes, overflow-checked, as an error naming the buffer.
Status buffer_bytes(const char* what, std::uint64_t count, std::uint64_t elem_bytes, std::uint64_t* out) {
  if (!checked_mul(count, elem_bytes, out))
    return Status::error(StatusCode::kOutOfMemory, "%s: size overflows 64 bits", what);
  return Status();
}

template <typename T>
Status carve_array(Arena& arena, const char* region_name, std::uint64_t count, T** out) {
  std::uint64_t bytes = 0;
  POCKETLM_TRY(buffer_bytes(region_name, count, sizeof(T), &bytes));
  void* p = nullptr;
  POCKETLM_TRY(arena.allocate(bytes, region_name, &p));
  *out = static_cast<T*>(p);
  return Status();
}

}  // namespace

Matrix* Transformer::slot(const TensorInfo& t) {
  Layer* layer = t.layer >= 0 ? &layers_[t.layer] : nullptr;
  switch (t.kind) {
    case TensorKind::kTokenEmbedding: return &token_embedding_;
    case TensorKind::kRmsAtt: return &layer->rms_att;
    case TensorKind::kWq: return &layer->wq;
    case TensorKind::kWk: return &layer->wk;
    case TensorKind::kWv: return &layer->wv;
    case TensorKind::kWo: return &layer->wo;
    case TensorKind::kRmsFfn: return &layer->rms_ffn;
    case TensorKind::kW1: return &layer->w1;
    case TensorKind::kW2: return &layer->w2;
    case TensorKind::kW3: return &layer->w3;
    case TensorKind::kRmsFinal: return &rms_final_;
    case TensorKind::kWcls: return &wcls_;
    default: return nullptr;
  }
}

Status Transformer::carve(const ModelSpec& spec, int seq_len, const Kernels& kernels, Arena& arena) {
  spec_ = spec;
  k_ = &kernels;
  interleave_ = spec.group_size > 0 ? q80_interleave_of(kernels, spec.group_size) : kernels.f32_interleave;
  seq_len_ = seq_len;
  const ModelConfig& c = spec.config;
  POCKETLM_TRY(carve_array(arena, region::kLayerTable, static_cast<std::uint64_t>(c.n_layers), &layers_));
  if (layers_) {
    for (int l = 0; l < c.n_layers; ++l) layers_[l] = Layer{};
  }

  // Weights, in file order so that loading reads the file front to back.
  weight_bytes_per_token_ = 0;
  for (int i = 0; i < spec.tensor_count(); ++i) {
    const TensorInfo t = spec.tensor(i);
    Matrix dummy;
    Matrix* m = layers_ || t.layer < 0 ? slot(t) : &dummy;  // measuring: layers_ is null
    if (!m) continue;
    m->dtype = t.dtype;
    const char* name = region_of(t.kind);
    if (t.dtype == DType::kF32) {
      POCKETLM_TRY(carve_array(arena, name, t.numel(), &m->f32));
    } else {
      POCKETLM_TRY(carve_array(arena, name, t.numel(), &m->q));
      POCKETLM_TRY(carve_array(arena, name, t.numel() / static_cast<std::uint64_t>(spec.group_size), &m->s));
    }
    // Per token the classifier and every layer matrix are read whole; the embedding one row.
    weight_bytes_per_token_ += t.kind == TensorKind::kTokenEmbedding ? t.bytes() / t.rows : t.bytes();
  }
  if (spec.shared_classifier) {
    wcls_ = token_embedding_;
    weight_bytes_per_token_ += spec.tensor(TensorKind::kTokenEmbedding, -1).bytes();
  }

  const std::uint64_t dim = static_cast<std::uint64_t>(c.dim);
  const std::uint64_t hidden = static_cast<std::uint64_t>(c.hidden_dim);
  const std::uint64_t kv_dim = static_cast<std::uint64_t>(c.kv_dim());
  const std::uint64_t seq = static_cast<std::uint64_t>(seq_len);
  std::uint64_t kv_elems = 0;
  if (!checked_product(&kv_elems, static_cast<std::uint64_t>(c.n_layers), seq, kv_dim))
    return Status::error(StatusCode::kOutOfMemory, "kv cache: n_layers %d x seq_len %d x kv_dim %d overflows",
                         c.n_layers, seq_len, c.kv_dim());
  POCKETLM_TRY(carve_array(arena, region::kKvCache, kv_elems, &key_cache_));
  POCKETLM_TRY(carve_array(arena, region::kKvCache, kv_elems, &value_cache_));

  POCKETLM_TRY(carve_array(arena, region::kActivations, dim, &x_));
  POCKETLM_TRY(carve_array(arena, region::kActivations, dim, &xb_));
  POCKETLM_TRY(carve_array(arena, region::kActivations, dim, &xb2_));
  POCKETLM_TRY(carve_array(arena, region::kActivations, hidden, &hb_));
  POCKETLM_TRY(carve_array(arena, region::kActivations, hidden, &hb2_));
  POCKETLM_TRY(carve_array(arena, region::kActivations, dim, &q_));
  POCKETLM_TRY(carve_array(arena, region::kActivations, static_cast<std::uint64_t>(c.n_heads) * seq, &att_));
  if (spec.group_size > 0) {
    const std::uint64_t widest = dim > hidden ? dim : hidden;
    POCKETLM_TRY(carve_array(arena, region::kActivations, widest, &aq_));
    POCKETLM_TRY(
        carve_array(arena, region::kActivations, widest / static_cast<std::uint64_t>(spec.group_size), &as_));
  }
  POCKETLM_TRY(carve_array(arena, region::kLogits, static_cast<std::uint64_t>(c.vocab_size), &logits_));
  const std::uint64_t rope_entries = seq * static_cast<std::uint64_t>(c.head_size() / 2);
  POCKETLM_TRY(carve_array(arena, region::kRope, rope_entries, &rope_cos_));
  POCKETLM_TRY(carve_array(arena, region::kRope, rope_entries, &rope_sin_));
  // Load-time scratch for one block of rows being interleaved (f32: 4 bytes a value; q8_0:
  // 1 byte a value plus its share of the scales, at most 4 bytes more for group size 1).
  const std::uint64_t il = static_cast<std::uint64_t>(row_interleave());
  if (il > 1) {
    const std::uint64_t widest = dim > hidden ? dim : hidden;
    POCKETLM_TRY(carve_array(arena, region::kRepack, il * widest * (spec.group_size > 0 ? 2 : 1), &repack_));
  }
  return Status();
}

Status Transformer::load_matrix(Storage& storage, const TensorInfo& t, Matrix* m, std::size_t chunk_bytes) {
  const std::size_t il = t.rows > 1 ? static_cast<std::size_t>(row_interleave()) : 1;
  const std::size_t n = static_cast<std::size_t>(t.cols), d = static_cast<std::size_t>(t.rows);
  const std::size_t full = il > 1 ? d / il * il : 0;
  // Full blocks of il rows through the scratch, then the tail rows (or the whole matrix)
  // straight into place.
  if (t.dtype == DType::kF32) {
    auto* dst = const_cast<float*>(m->f32);
    for (std::size_t r = 0; r < full; r += il) {
      POCKETLM_TRY(read_chunked(storage, t.offset + r * n * 4, repack_, il * n * 4, chunk_bytes));
      interleave_block(dst + r * n, repack_, n, il);
    }
    return read_chunked(storage, t.offset + full * n * 4, dst + full * n, (d - full) * n * 4, chunk_bytes);
  }
  const std::size_t gs = static_cast<std::size_t>(spec_.group_size), groups = n / gs;
  auto* dst_q = const_cast<std::int8_t*>(m->q);
  auto* dst_s = const_cast<float*>(m->s);
  // After the scales; there is no scratch (repack_ is null) when no row is interleaved, and
  // offsetting a null pointer is undefined behaviour (found by fuzz/fuzz_checkpoint).
  auto* scratch_q = full > 0 ? reinterpret_cast<std::int8_t*>(repack_ + il * groups) : nullptr;
  for (std::size_t r = 0; r < full; r += il) {
    POCKETLM_TRY(read_chunked(storage, t.offset + r * n, scratch_q, il * n, chunk_bytes));
    POCKETLM_TRY(read_chunked(storage, t.scales_offset + r * groups * 4, repack_, il * groups * 4, chunk_bytes));
    interleave_q80_block(dst_q + r * n, dst_s + r * groups, scratch_q, repack_, n, gs, il);
  }
  POCKETLM_TRY(read_chunked(storage, t.offset + full * n, dst_q + full * n, (d - full) * n, chunk_bytes));
  return read_chunked(storage, t.scales_offset + full * groups * 4, dst_s + full * groups, (d - full) * groups * 4,
                      chunk_bytes);
}

Status Transformer::load(Storage& storage, std::size_t chunk_bytes) {
  fill_rope_table(seq_len_, spec_.config.head_size(), rope_cos_, rope_sin_);
  for (int i = 0; i < spec_.tensor_count(); ++i) {
    const TensorInfo t = spec_.tensor(i);
    Matrix* m = slot(t);
    if (!m) continue;
    POCKETLM_TRY(load_matrix(storage, t, m, chunk_bytes));
  }
  return Status();
}

void Transformer::prepare_input(const float* x, int n) {
  if (spec_.group_size > 0) k_->quantize_q80(x, n, spec_.group_size, aq_, as_);
}

void Transformer::matmul_rows(float* out, const Matrix& w, const float* x, int n, int r0, int r1) const {
  // r0 is a multiple of the row interleave, so block r0 / il starts at element r0 * n.
  const std::size_t off = static_cast<std::size_t>(r0) * static_cast<std::size_t>(n);
  if (w.dtype == DType::kF32) {
    k_->matmul_f32(out + r0, x, w.f32 + off, n, r1 - r0);
  } else {
    const int gs = spec_.group_size;
    k_->matmul_q80(out + r0, aq_, as_, w.q + off, w.s + off / static_cast<std::size_t>(gs), n, r1 - r0, gs);
  }
}

namespace {

// Row blocks per task: a multiple of 32 rows keeps every backend's row blocks whole
// (interleave 4 or 8, 8 rows per q8_0 step), so each row is computed by the same code
// whatever the worker count.
constexpr int kRowAlign = 32;

// Up to three matmuls that read the same input (wq/wk/wv, w1/w3) go out as one job, their
// row blocks numbered one after the other: one dispatch instead of three.
struct MatmulJob {
  const Transformer* model;
  const MatmulOp* ops;
  int count;
  int blocks[3];  // row blocks of each op
  int rows[3];    // rows per block of each op
};

struct AttentionTask {
  const Kernels* kernels;
  const AttentionArgs* args;
  int heads_per_task;
};

}  // namespace

void Transformer::matmul(float* out, const Matrix& w, const float* x, int n, int d) {
  const MatmulOp op{out, &w, x, n, d};
  matmuls(&op, 1);
}

void Transformer::matmuls(const MatmulOp* ops, int count) {
  const int workers = parallel_ ? parallel_->workers() : 1;
  if (workers == 1) {
    for (int i = 0; i < count; ++i) matmul_rows(ops[i].out, *ops[i].w, ops[i].x, ops[i].n, 0, ops[i].d);
    return;
  }
  MatmulJob job{this, ops, count, {}, {}};
  int tasks = 0;
  for (int i = 0; i < count; ++i) {
    // About four blocks per worker, taken dynamically, so that no worker idles long at the
    // end; blocks of whole multiples of kRowAlign rows.
    int rows = (ops[i].d + 4 * workers - 1) / (4 * workers);
    rows = (rows + kRowAlign - 1) / kRowAlign * kRowAlign;
    job.rows[i] = rows;
    job.blocks[i] = (ops[i].d + rows - 1) / rows;
    tasks += job.blocks[i];
  }
  parallel_->run(tasks, [](void* ctx, int task) {
    const auto* j = static_cast<const MatmulJob*>(ctx);
    int i = 0;
    while (task >= j->blocks[i]) task -= j->blocks[i++];
    const MatmulOp& op = j->ops[i];
    const int r0 = task * j->rows[i];
    const int r1 = r0 + j->rows[i] < op.d ? r0 + j->rows[i] : op.d;
    j->model->matmul_rows(op.out, *op.w, op.x, op.n, r0, r1);
  }, &job);
}

void Transformer::attention(const AttentionArgs& args) {
  const int workers = parallel_ ? parallel_->workers() : 1;
  if (workers == 1 || args.n_heads == 1) {
    k_->attention(args);
    return;
  }
  const int per_task = (args.n_heads + workers - 1) / workers;
  AttentionTask task{k_, &args, per_task};
  parallel_->run((args.n_heads + per_task - 1) / per_task, [](void* ctx, int i) {
    const auto* t = static_cast<const AttentionTask*>(ctx);
    AttentionArgs part = *t->args;
    part.head_begin = i * t->heads_per_task;
    part.head_end = part.head_begin + t->heads_per_task < part.n_heads ? part.head_begin + t->heads_per_task
                                                                         : part.n_heads;
    t->kernels->attention(part);
  }, &task);
}

float* Transformer::forward(int token, int pos) {
  const ModelConfig& c = spec_.config;
  const int dim = c.dim;
  const int kv_dim = c.kv_dim();
  const int hidden = c.hidden_dim;
  const int head_size = c.head_size();
  const int gs = spec_.group_size;

  // Token embedding: one row, dequantized on the fly when the table is int8.
  if (token_embedding_.dtype == DType::kF32)
    copy_interleaved_row(token_embedding_.f32, static_cast<std::size_t>(token), static_cast<std::size_t>(dim),
                         static_cast<std::size_t>(c.vocab_size), static_cast<std::size_t>(row_interleave()), x_);
  else
    dequantize_interleaved_q80_row(token_embedding_.q, token_embedding_.s, static_cast<std::size_t>(token),
                                   static_cast<std::size_t>(dim), static_cast<std::size_t>(c.vocab_size),
                                   static_cast<std::size_t>(gs), static_cast<std::size_t>(row_interleave()), x_);

  for (int l = 0; l < c.n_layers; ++l) {
    const Layer& L = layers_[l];
    // Attention block.
    k_->rmsnorm(xb_, x_, L.rms_att.f32, dim);
    const std::size_t loff = static_cast<std::size_t>(l) * static_cast<std::size_t>(seq_len_) * kv_dim;
    float* k = key_cache_ + loff + static_cast<std::size_t>(pos) * kv_dim;
    float* v = value_cache_ + loff + static_cast<std::size_t>(pos) * kv_dim;
    prepare_input(xb_, dim);
    const MatmulOp qkv[] = {{q_, &L.wq, xb_, dim, dim}, {k, &L.wk, xb_, dim, kv_dim}, {v, &L.wv, xb_, dim, kv_dim}};
    matmuls(qkv, 3);
    const std::size_t rope_row = static_cast<std::size_t>(pos) * static_cast<std::size_t>(head_size / 2);
    apply_rope(q_, k, dim, kv_dim, head_size, rope_cos_ + rope_row, rope_sin_ + rope_row);
    const AttentionArgs args{xb_, att_, q_, key_cache_ + loff, value_cache_ + loff, pos,
                             c.n_heads, c.n_kv_heads, head_size, kv_dim, seq_len_};
    attention(args);
    prepare_input(xb_, dim);
    matmul(xb2_, L.wo, xb_, dim, dim);
    for (int i = 0; i < dim; ++i) x_[i] += xb2_[i];

    // Feed-forward block (SwiGLU).
    k_->rmsnorm(xb_, x_, L.rms_ffn.f32, dim);
    prepare_input(xb_, dim);
    const MatmulOp gate_up[] = {{hb_, &L.w1, xb_, dim, hidden}, {hb2_, &L.w3, xb_, dim, hidden}};
    matmuls(gate_up, 2);
    k_->swiglu(hb_, hb2_, hidden);
    prepare_input(hb_, hidden);
    matmul(xb_, L.w2, hb_, hidden, dim);
    for (int i = 0; i < dim; ++i) x_[i] += xb_[i];
  }

  k_->rmsnorm(x_, x_, rms_final_.f32, dim);
  prepare_input(x_, dim);
  matmul(logits_, wcls_, x_, dim, c.vocab_size);
  return logits_;
}

}  // namespace pocketlm
