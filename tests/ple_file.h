// A small per-layer-embedding model written as a GGUF file in memory, for the PLE tests
// (ple_model_test, ple_file_test): dim 64, hidden_dim 96, 2 layers, 4 heads (2 kv heads), vocab
// 96, seq_len 32, per_layer_dim 32; every matrix is whole blocks of 32, so the file can be Q8_0 or
// Q4_0. Values depend on the tensor's name only. And the engine's logits over a fixed prompt.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "pocketlm/format/gguf.h"
#include "pocketlm/kernels/kernels.h"

namespace pocketlm::test::ple {

// GELU's exact erf form in double (the kind's gate, docs/ple.md), for the engine's to be measured
// against.
inline double exact_gelu(float x) { return 0.5 * x * std::erfc(-static_cast<double>(x) / std::sqrt(2.0)); }

constexpr int kDim = 64, kHidden = 96, kLayers = 2, kHeads = 4, kKvHeads = 2, kVocab = 96, kSeq = 32, kP = 32;
constexpr int kKvDim = kDim / kHeads * kKvHeads;

struct Tensor {
  std::string name;
  int rows, cols;
};

// The file's tensors, in the order they are written.
std::vector<Tensor> ple_tensors();
// Values that depend on the tensor's name only: norms near 1, matrices of about unit gain.
std::vector<float> values_of(const Tensor& t);

struct FileOptions {
  std::uint32_t matrix_type = gguf::kGgmlF32;
  int p_key = kP;                 // embedding_length_per_layer_input as written
  std::string drop;               // a tensor left out
  int table_cols = kLayers * kP;  // per_layer_token_embd's columns
};
// The GGUF file's bytes (norms always F32).
std::vector<unsigned char> ple_file(const FileOptions& o = {});

// The prompt the logits are computed over.
inline constexpr int kPrompt[] = {1, 17, 5, 42, 88, 3};
// The logits of every forward() call: the prompt (its first 4 tokens through forward_batch when
// `batch` > 1), then greedy tokens to position 14; on `kernels` with `threads` workers.
std::vector<float> engine_logits(const std::vector<unsigned char>& file, const Kernels& kernels, int threads, int batch);

}  // namespace pocketlm::test::ple
