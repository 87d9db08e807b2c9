// Transformer: a Llama-2 decoder (RMSNorm, RoPE, GQA attention, SwiGLU FFN) whose weights,
// KV cache and activations are carved from one Arena. The forward pass reads top to bottom
// like llama2.c's run.c (fp32) and runq.c (q80); all arithmetic goes through a Kernels table.
#pragma once

#include <cstdint>

#include "pocketlm/base/parallel.h"
#include "pocketlm/format/model_spec.h"
#include "pocketlm/io/storage.h"
#include "pocketlm/kernels/kernels.h"
#include "pocketlm/memory/arena.h"

namespace pocketlm {

// A weight matrix [rows, cols] in the arena: fp32 values, or int8 values with one fp32
// scale per group of the flattened matrix.
struct Matrix {
  DType dtype = DType::kF32;
  const float* f32 = nullptr;
  const std::int8_t* q = nullptr;
  const float* s = nullptr;
};

// One matmul of a forward pass: out[d] = W[d,n] · x.
struct MatmulOp {
  float* out;
  const Matrix* w;
  const float* x;
  int n, d;
};

// Arena region names, shared with the memory plan.
namespace region {
inline constexpr const char* kEmbedding = "embedding";
inline constexpr const char* kAttention = "attention weights";
inline constexpr const char* kFfn = "ffn weights";
inline constexpr const char* kNorms = "norms";
inline constexpr const char* kClassifier = "classifier";
inline constexpr const char* kKvCache = "kv cache";
inline constexpr const char* kActivations = "activations";
inline constexpr const char* kLogits = "logits";
inline constexpr const char* kLayerTable = "layer table";
inline constexpr const char* kRepack = "repack scratch";
inline constexpr const char* kRope = "rope table";
}  // namespace region

class Transformer {
 public:
  // Carves weights (in the layout `kernels` reads), KV cache (for `seq_len` <= the model's)
  // and activations from `arena`. With a measuring arena nothing is touched; only the sizes
  // are recorded.
  Status carve(const ModelSpec& spec, int seq_len, const Kernels& kernels, Arena& arena);
  // Reads every tensor from `storage` into its arena slot, `chunk_bytes` per read; matrices
  // for an interleaving backend go through the repack scratch, a block of rows at a time.
  Status load(Storage& storage, std::size_t chunk_bytes);

  // Splits matmul rows and attention heads over `parallel` (nullptr: the calling thread).
  void set_parallel(Parallel* parallel) { parallel_ = parallel; }

  // Runs one token at position pos (0 <= pos < seq_len) and returns the logits
  // [vocab_size], valid until the next call. Token and pos must be in range (checked by
  // the caller: Session).
  float* forward(int token, int pos);

  const ModelSpec& spec() const { return spec_; }
  int seq_len() const { return seq_len_; }
  // Bytes of weights read from the arena for one token (matrices plus one embedding row).
  std::uint64_t weight_bytes_per_token() const { return weight_bytes_per_token_; }

 private:
  struct Layer {
    Matrix rms_att, rms_ffn;  // fp32 vectors [dim]
    Matrix wq, wk, wv, wo, w1, w2, w3;
  };
  // The slot a tensor of the file is loaded into; nullptr for tensors the engine does not
  // use (llama2.c v0's freq_cis tables: RoPE is computed).
  Matrix* slot(const TensorInfo& t);
  // Rows interleaved per block in the weight layout of this backend (1 = row-major).
  int row_interleave() const { return interleave_; }
  Status load_matrix(Storage& storage, const TensorInfo& t, Matrix* m, std::size_t chunk_bytes);
  // q80: quantizes x[n] into the shared activation buffer (runq.c's quantize()); fp32: no-op.
  void prepare_input(const float* x, int n);
  // out[d] = W[d,n] · x, reading the quantized copy of x for q8_0 weights; rows are split
  // over the workers in blocks that keep every interleaved row block whole.
  void matmul(float* out, const Matrix& w, const float* x, int n, int d);
  // Several matmuls of the same input (at most 3), split over the workers as one job.
  void matmuls(const MatmulOp* ops, int count);
  void matmul_rows(float* out, const Matrix& w, const float* x, int n, int r0, int r1) const;
  void attention(const AttentionArgs& args);

  ModelSpec spec_;
  const Kernels* k_ = nullptr;
  Parallel* parallel_ = nullptr;
  int interleave_ = 1;
  int seq_len_ = 0;

  // Weights.
  Matrix token_embedding_;
  Matrix rms_final_;
  Matrix wcls_;  // aliases token_embedding_ when the classifier is shared
  Layer* layers_ = nullptr;
  std::uint64_t weight_bytes_per_token_ = 0;

  // Run state (llama2.c's RunState).
  float* x_ = nullptr;     // [dim] residual stream
  float* xb_ = nullptr;    // [dim]
  float* xb2_ = nullptr;   // [dim]
  float* hb_ = nullptr;    // [hidden_dim]
  float* hb2_ = nullptr;   // [hidden_dim]
  float* q_ = nullptr;     // [dim]
  float* att_ = nullptr;   // [n_heads * seq_len]
  float* logits_ = nullptr;       // [vocab_size]
  float* key_cache_ = nullptr;    // [n_layers * seq_len * kv_dim]
  float* value_cache_ = nullptr;  // [n_layers * seq_len * kv_dim]
  std::int8_t* aq_ = nullptr;     // [max(dim, hidden_dim)] quantized activations (q80 only)
  float* as_ = nullptr;           // [max(dim, hidden_dim) / group_size] their scales
  float* repack_ = nullptr;       // load-time scratch for one block of interleaved rows
  float* rope_cos_ = nullptr;     // [seq_len * head_size / 2] (model/rope_table.h)
  float* rope_sin_ = nullptr;
};

}  // namespace pocketlm
