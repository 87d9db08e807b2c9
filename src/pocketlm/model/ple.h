// Per-layer-embedding (PLE) models, architecture `pocketlm-ple`: a Llama-2 decoder whose every
// layer also adds a small gated projection of a per-layer input that each token reads as one
// row of a large table (the per-layer table, L x P values per token). The table can hold most
// of the parameters and stay in flash: a token reads one row of it (the ESP32 write-up's
// 28.9M-parameter model reads about 450 bytes of its 25M-parameter table per token). After
// Gemma 3n's per-layer inputs, with pocketlm's own choices pinned in docs/ple.md:
//
//   x     = embedding[tok]                                 (D values)
//   q     = (ple_proj · x) * (1 / sqrt(D)), each of its L slices of P values
//           rmsnorm'd with the one ple_proj_norm weight [P]
//   ple   = (q + ple_table[tok] * sqrt(P)) * (1 / sqrt(2))  (slice l: layer l's input)
//   per layer: llama's attention block, llama's FFN block, then on the raw residual
//           g = gelu(ple_gate_l · x) * ple_l, y = ple_out_l · g, x += rmsnorm(y) (ple_post_norm_l)
//   then llama's final norm and classifier (the Decoder's).
//
// Every constant is a float: 1 / sqrt(D) and 1 / sqrt(2) as 1.0f / sqrtf(n), sqrt(P) as
// sqrtf(P) (IEEE square roots are exact to the rounding on every target).
#pragma once

#include "pocketlm/model/decoder.h"

namespace pocketlm {

class PleModel final : public Decoder {
 public:
  // The Decoder's carving, then the per-layer inputs and gates of one token. Errors: the
  // spec has no per_layer_dim, arena exhausted.
  Status carve(const ModelSpec& spec, int seq_len, const Kernels& kernels, const WeightPlacement& placement, KvType kv,
               Arena& arena) override;
  // The same buffers for a block of `batch` prompt tokens.
  Status carve_prefill(int batch, Arena& arena) override;

 protected:
  void gather_rows(const std::int32_t* tokens, int count) override;
  void layers(const std::int32_t* tokens, const TokenRows& r, int pos) override;

 private:
  // The per-layer inputs of `rows` tokens, token t's at t * n_layers * per_layer_dim.
  struct Inputs {
    float* ple = nullptr;   // [rows, L * P]: the table rows, then the combined inputs
    float* proj = nullptr;  // [rows, L * P]: ple_proj · x
    float* gate = nullptr;  // [rows, P]: the gate of the current layer
    Status carve(const ModelConfig& c, int rows, const char* region, Arena& arena);
  };
  Inputs& inputs(int count) { return count > 1 ? batch_inputs_ : one_; }
  // Steps 2-4 above for the r.count tokens whose embedding rows are in r.x.
  void combine_inputs(const TokenRows& r, Inputs& in);

  Inputs one_;
  Inputs batch_inputs_;
  // The constants of steps 2-4 (1 / sqrt(D), sqrt(P), 1 / sqrt(2)), computed once at carve().
  float inv_sqrt_dim_ = 0.0f, sqrt_p_ = 0.0f, inv_sqrt2_ = 0.0f;
};

}  // namespace pocketlm
