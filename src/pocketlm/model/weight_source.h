// WeightSource: where the forward pass gets its weights. The forward pass asks for "layer l
// now", "this embedding row", "the classifier", and never learns which tier served them:
// resident in the arena or read per token from storage (model/placed_weights.h): a
// memory stick or flash through bounded buffers, with the same interface.
#pragma once

#include <cstdint>

#include "pocketlm/format/tensor_role.h"
#include "pocketlm/quant/matrix.h"

namespace pocketlm {

// One decoder layer's weights, one per per-layer role of the role table, by role: w[kWq].
// Shapes are the table's (attention wq [dim, dim], wk wv [kv_dim, dim], wo [dim, dim]; SwiGLU
// w1 w3 [hidden_dim, dim], w2 [dim, hidden_dim]); norm weights are f32 vectors [dim]
// (rows == 1). A role the model file does not hold stays an empty Matrix.
struct LayerWeights {
  Matrix by_slot[kLayerRoleCount];

  const Matrix& operator[](TensorRole role) const { return by_slot[layer_slot(role)]; }
  Matrix& operator[](TensorRole role) { return by_slot[layer_slot(role)]; }
};

class WeightSource {
 public:
  virtual ~WeightSource() = default;
  // Row `token` of the row-gather table `role` (TensorUse::kRowGather: the token embedding),
  // dequantized to f32 into out[cols], wherever the table lives: the first calls of a token's
  // forward pass.
  virtual void row(TensorRole role, int token, float* out) = 0;
  // Starts bringing in the token's first streamed weights (after its rows).
  virtual void begin_token() {}
  // As begin_token() for a pass that stops after the last layer (a block of prompt tokens
  // whose logits nobody reads): nothing of the classifier is read ahead.
  virtual void begin_layers() { begin_token(); }
  // Layer l's weights (0 <= l < n_layers), valid until the next call of layer().
  virtual const LayerWeights& layer(int l) = 0;
  // For a matrix whose rows stay in storage (Matrix::stream): a view of rows [r0, r0 + k)
  // in RAM, k chosen by the source (view.rows), valid until the next call.
  virtual Matrix stream_rows(const Matrix& m, int r0) { return rows_from(m, r0); }
  // The first storage error of this session (a failed read, a non-finite streamed weight);
  // the forward pass computed on zeros instead, and the session stops.
  virtual Status status() const { return Status(); }
  // A global tensor the kind reads besides those below (a kind's own matrices and norms),
  // by role: resident, or a Matrix whose rows are streamed (Matrix::stream).
  virtual const Matrix& global(TensorRole role) = 0;
  // The final RMSNorm weights [dim] and the classifier [vocab_size, dim].
  virtual const float* final_norm() = 0;
  virtual const Matrix& classifier() = 0;
  // Bytes of weights one token's forward pass reads (every matrix and norm whole, one row of
  // each row-gather table), wherever they live.
  virtual std::uint64_t bytes_per_token() const = 0;
};

}  // namespace pocketlm
