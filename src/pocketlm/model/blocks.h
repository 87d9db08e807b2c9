// The shared blocks of Llama-family decoders — RMSNorm, the attention block (QKV, RoPE,
// grouped-query attention over the KV cache, output projection), the SwiGLU FFN block — and
// the matmul dispatch under them (activations quantized once per input vector per activation
// type; rows split over workers). Model kinds (model/llama.cpp and each kind's
// own file) compose them into a forward pass that reads top to bottom, as llama2.c's run.c does.
#pragma once

#include <cstdint>

#include "pocketlm/base/parallel.h"
#include "pocketlm/format/model_spec.h"
#include "pocketlm/kernels/kernels.h"
#include "pocketlm/memory/arena.h"
#include "pocketlm/model/weight_source.h"

namespace pocketlm {

// The KV cache's element type: f32 (run.c's, exact) or f16 (half the bytes).
enum class KvType : unsigned char { kF32, kF16 };

// Arena regions of the run state.
namespace region {
inline constexpr const char* kKvCache = "kv cache";
inline constexpr const char* kActivations = "activations";
inline constexpr const char* kLogits = "logits";
inline constexpr const char* kRope = "rope table";
inline constexpr const char* kPrefill = "prefill batch";
}  // namespace region

// llama2.c's RunState: the activations of one token and the KV cache, all from the arena.
struct DecoderState {
  float* x = nullptr;       // [dim] residual stream
  float* xb = nullptr;      // [dim]
  float* xb2 = nullptr;     // [dim]
  float* hb = nullptr;      // [hidden_dim]
  float* hb2 = nullptr;     // [hidden_dim]
  float* q = nullptr;       // [dim]
  float* att = nullptr;     // [n_heads * seq_len]
  float* logits = nullptr;  // [vocab_size]
  float* key_cache = nullptr;    // [n_layers * seq_len * kv_dim]
  float* value_cache = nullptr;  // [n_layers * seq_len * kv_dim]
  // --kv f16: the cache in binary16 (half the bytes, not bit-exact), K and V of the current
  // position computed into k_now/v_now [kv_dim] and rounded into it.
  std::uint16_t* key_cache16 = nullptr;
  std::uint16_t* value_cache16 = nullptr;
  float* k_now = nullptr;
  float* v_now = nullptr;
  float* rope_cos = nullptr;     // [seq_len * head_size / 2] (model/rope_table.h)
  float* rope_sin = nullptr;

  // Carves every buffer for `config` at context `seq_len` with the cache in `kv`; fills the
  // RoPE table (no-op on a measuring arena). Errors: size overflow or arena exhausted.
  Status carve(const ModelConfig& config, int seq_len, KvType kv, Arena& arena);
};

// Bytes of one input vector of `width` values in activation type `act` (values and scales),
// rounded up to whole blocks of `group`; false on overflow or a group <= 0.
bool activation_row_bytes(TensorType act, std::uint64_t width, int group, std::uint64_t* values,
                          std::uint64_t* scales);

// The widest vector a matmul of a `spec` model reads: dim, hidden_dim or the columns of a
// kind's own matrix (the input buffers are this wide).
std::uint64_t widest_matmul_input(const ModelSpec& spec);

// One matmul of a pass over `tokens` inputs: row t of the output (w.rows values) at
// out + t * out_stride (out_stride is unused for one token).
struct MatmulOp {
  float* out;
  const Matrix* w;
  std::size_t out_stride = 0;
};

// The activations of a block of prompt tokens run together (batched prefill): row t of each
// buffer belongs to the block's token t (carved in model/prefill.cpp).
struct BatchState {
  int batch = 0;            // rows (tokens) per block
  float* x = nullptr;       // [batch * dim]
  float* xb = nullptr;      // [batch * dim]
  float* xb2 = nullptr;     // [batch * dim]
  float* q = nullptr;       // [batch * dim]
  float* hb = nullptr;      // [batch * hidden_dim]
  float* hb2 = nullptr;     // [batch * hidden_dim]
  float* att = nullptr;     // [n_heads * kAttentionQueryTile * seq_len] scores, for a backend
                            // with attention_batch (else null: the tokens attend one after
                            // another through DecoderState::att)

  // Carves the buffers of `batch` tokens (batch <= 1: none) in region::kPrefill. Errors: size
  // overflow or arena exhausted (kOutOfMemory).
  Status carve(const ModelConfig& config, int seq_len, int batch, bool batched_attention, Arena& arena);
};

// The activations the blocks work on: `count` tokens at consecutive positions, token t's row
// of each buffer at t * dim (x, xb, xb2, q) or t * hidden_dim (hb, hb2). Decode is one row
// (DecoderState's buffers), prefill a block of rows (BatchState's); the blocks below are
// written once over rows, with the per-row arithmetic of run.c either way.
struct TokenRows {
  int count = 1;
  float* x = nullptr;
  float* xb = nullptr;
  float* xb2 = nullptr;
  float* q = nullptr;
  float* hb = nullptr;
  float* hb2 = nullptr;
  float* att = nullptr;  // attention scores (Kernels::attention_batch's tile when count > 1)

  // One token: the decoder state's own buffers.
  static TokenRows of(const DecoderState& s);
  // The first `count` tokens of a prefill block (count <= b.batch); without batched
  // attention scores the tokens share s.att, one after another.
  static TokenRows of(const BatchState& b, const DecoderState& s, int count);
};

// The kernels, the workers, and the quantized copies of the current input vector.
class BlockOps {
 public:
  // Carves one input buffer per activation type the spec's matrices need, wide enough for
  // max(dim, hidden_dim). Errors: arena exhausted.
  Status carve(const ModelSpec& spec, const Kernels& kernels, Arena& arena);
  void set_parallel(Parallel* parallel) { parallel_ = parallel; }
  // Where rows of matrices that stay in storage come from.
  void set_source(WeightSource* source) { source_ = source; }
  const Kernels& kernels() const { return *k_; }

  // out = w * x / rms(x) with the model's eps.
  void rmsnorm(float* out, const float* x, const float* w, int n) const { k_->rmsnorm(out, x, w, n, eps_); }
  // Up to three matmuls that read the same inputs: `tokens` vectors x[n], token t's at
  // x + t * x_stride. Each input is quantized once per activation type, and the row blocks of
  // all the ops go to the workers as one job; with several tokens each weight block is read
  // once for all of them (kernels/batch.h), streamed matrices fetched block by block once.
  // One token runs the single-vector kernels (tokens <= the batch carve_batch() carved).
  void matmuls(const MatmulOp* ops, int count, const float* x, std::size_t x_stride, int n, int tokens);
  void matmul(float* out, std::size_t out_stride, const Matrix& w, const float* x, std::size_t x_stride, int n,
              int tokens) {
    const MatmulOp op{out, &w, out_stride};
    matmuls(&op, 1, x, x_stride, n, tokens);
  }
  // One token's out[w.rows] = W · x[n] (the classifier).
  void matmul(float* out, const Matrix& w, const float* x, int n) { matmul(out, 0, w, x, 0, n, 1); }
  // args.count queries (token i's q and out rows args.q_stride apart), split over the workers
  // by heads: one query through the backend's attention (attention_f16 for an f16 cache),
  // several through attention_batch (args.att sized for it), or the one-query kernel once
  // per token when the backend has none or the cache is f16.
  void attention(const AttentionArgs& args);

  // Rows [r0, r1) of one op for every token of the current pass (r0 a multiple of the op's
  // interleave), for the workers.
  void matmul_rows(const MatmulOp& op, int r0, int r1) const;

  // Batched prefill. Carves the quantized inputs of `batch` tokens per activation type (after
  // carve()); batch <= 1 carves nothing. Errors: arena exhausted.
  Status carve_batch(const ModelSpec& spec, int batch, Arena& arena);

 private:
  // `kernel` over args' heads, split over the workers; per_token: a one-query kernel run for
  // each of args.count tokens.
  void run_attention(void (*kernel)(const AttentionArgs&), bool per_token, const AttentionArgs& args);
  // Runs resident ops (all rows in RAM) over the workers as one job.
  void dispatch(const MatmulOp* ops, int count);

  const Kernels* k_ = nullptr;
  Parallel* parallel_ = nullptr;
  WeightSource* source_ = nullptr;
  float eps_ = 1e-5f;
  int group_[kTensorTypeCount] = {};            // block size of each activation type in use
  void* input_values_[kTensorTypeCount] = {};   // the current input in each activation type
  float* input_scales_[kTensorTypeCount] = {};
  Activation input_[kTensorTypeCount] = {};
  int tokens_ = 1;  // inputs of the current matmuls(): 1 reads input_, more batch_input_
  // The current batch of inputs per activation type; for a quantized type its values and
  // scales point at buffers carved by carve_batch().
  ActivationBatch batch_input_[kTensorTypeCount] = {};
};

// For each row of r: x += wo · attention(RoPE(wq · xb), RoPE(wk · xb), wv · xb) with
// xb = rmsnorm(x), for layer l, token t at position pos + t (causal: it attends over
// 0..pos+t); the rows' keys and values go into the cache. (run.c's attention block.) An f16
// cache takes one row at a time.
void attention_block(BlockOps& ops, const LayerWeights& w, const ModelConfig& c, int seq_len, DecoderState& s,
                     const TokenRows& r, int l, int pos);
// For each row of r: x += w2 · (silu(w1 · xb) * (w3 · xb)) with xb = rmsnorm(x). (run.c's FFN
// block.)
void ffn_block(BlockOps& ops, const LayerWeights& w, const ModelConfig& c, const TokenRows& r);
}  // namespace pocketlm
