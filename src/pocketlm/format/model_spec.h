// ModelSpec: what a model file says — the architecture, the config and a tensor table (role,
// layer, type, shape, offset, bytes) — validated before a single weight byte is read. Every
// reader (format/model_reader.h) produces one; everything after the reader is format-agnostic.
#pragma once

#include <cstddef>
#include <cstdint>

#include "pocketlm/base/status.h"
#include "pocketlm/format/tensor_role.h"
#include "pocketlm/quant/tensor_type.h"

namespace pocketlm {

struct Architecture;  // format/architecture.h (which includes this file)

// Layers a model may have (llama.cpp's limit on block_count); tables of layers are sized by it.
inline constexpr int kMaxLayers = 512;

enum class ModelFormat { kLlama2cV0, kLlama2cV1, kLlama2cV2, kGguf };
const char* format_name(ModelFormat format);  // "llama2.c v0 (legacy fp32)", ...

// The hyperparameters of a Llama-family decoder, after validation (all dims positive). Plain
// int (32 bits on every target: base/checked.h) so that messages print them with %d on
// toolchains where int32_t is long (arm-none-eabi, Xtensa).
struct ModelConfig {
  int dim = 0;         // residual stream width
  int hidden_dim = 0;  // SwiGLU FFN width
  int n_layers = 0;
  int n_heads = 0;     // query heads
  int n_kv_heads = 0;  // key/value heads (GQA when < n_heads)
  int vocab_size = 0;
  int seq_len = 0;     // maximum context, tokens
  // Fixed in llama2.c (run.c's constants); carried by GGUF files.
  float rms_eps = 1e-5f;         // RMSNorm epsilon
  float rope_theta = 10000.0f;   // RoPE base frequency
  int bos_id = 1;       // begin-of-sequence token; generating it ends a run (run.c)
  int eos_id = 2;       // end-of-sequence token
  // A kind's own hyperparameters, as its architecture names them (format/architecture.h):
  // 0 where the file does not give one.
  int kind_params[kMaxKindParams] = {};

  int head_size() const { return dim / n_heads; }
  int kv_dim() const { return dim / n_heads * n_kv_heads; }
};

// One tensor of the file. Matrices are row-major [rows, cols] = [out, in]; vectors have
// rows == 1. Types with a separate scale stream (q80) keep it at scales_offset().
// (The small fields first: 64 bytes on 64-bit hosts, as many as the stream table holds.)
struct TensorInfo {
  TensorRole role = TensorRole::kCount;
  TensorType type = TensorType::kF32;
  int layer = -1;  // -1 for tensors shared by all layers
  int group = 0;   // elements per block for types whose block is per tensor
  const RoleInfo* schema = nullptr;  // the role's row in the spec's architecture (ModelSpec::role)
  std::uint64_t rows = 0, cols = 0;
  std::uint64_t offset = 0;        // file offset of the values
  std::uint64_t value_bytes = 0;
  std::uint64_t scale_bytes = 0;   // 0 for types without a scale stream
  std::uint64_t bytes() const { return value_bytes + scale_bytes; }
  // The file offset of the scale stream, right after the values (0: the type has none).
  std::uint64_t scales_offset() const { return scale_bytes ? offset + value_bytes : 0; }
  std::uint64_t numel() const { return rows * cols; }
};

// A tokenizer stored inside the model file (GGUF's tokenizer.ggml.* arrays), located by the
// reader so that the session can size its tables and read them later through Storage in chunks
// (text/gguf_tokenizer.cpp). Only SentencePiece-style vocabularies ("llama") are readable.
struct EmbeddedTokenizer {
  bool present = false;           // tokenizer.ggml.model is "llama" and its arrays are valid
  char model[16] = "";            // tokenizer.ggml.model as found ("" when absent), for messages
  int count = 0;                  // tokens (= vocab_size)
  std::uint64_t tokens_offset = 0;  // file offset of the first token string (its u64 length)
  std::uint64_t scores_offset = 0;  // file offset of the f32 scores (0: none, scores are 0)
  std::uint64_t types_offset = 0;   // file offset of the i32 token types (0: none)
  std::uint64_t piece_bytes = 0;  // bytes of all pieces as the tokenizer holds them (see gguf_tokenizer.h)
  int max_piece_bytes = 0;
};

struct ModelSpec {
  ModelFormat format = ModelFormat::kLlama2cV0;
  // general.architecture (llama2.c files: "llama"): selects the model kind (model/model_kind.h);
  // static storage (an Architecture's name).
  const char* architecture = "llama";
  ModelConfig config;
  bool shared_classifier = true;  // the classifier is the token-embedding table
  int group_size = 0;             // llama2.c q80 group size; 0 for fp32 files
  std::uint64_t header_bytes = 0;
  std::uint64_t file_bytes = 0;   // equals the size the header implies (GGUF: at least)
  EmbeddedTokenizer tokenizer;    // GGUF models may carry their tokenizer

  // Tensors in file order (per-layer roles expand to n_layers entries, layer by layer).
  int tensor_count() const;
  TensorInfo tensor(int index) const;
  // The tensor of `role` for `layer` (ignored for global roles). The role must be present.
  TensorInfo tensor(TensorRole role, int layer) const;
  bool has(TensorRole role) const { return roles_[static_cast<int>(role)].present; }
  // The row of `role` in this spec's architecture (a shared row, or the kind's own; for a kind
  // role of an architecture this build does not know, a row that reads nothing).
  const RoleInfo& role(TensorRole role) const;
  // The architecture row of `architecture` (format/architecture.h); null if this build does not
  // know it.
  const Architecture* schema() const;
  TensorType type(TensorRole role) const { return roles_[static_cast<int>(role)].type; }

  // Back to a default-constructed spec (no roles), without a temporary on the stack.
  void reset();

  // For readers: declares that `role` is stored as `type` [rows, cols] at `offset` (layer 0)
  // with `stride` bytes between layers, its scale stream (if the type has one) right after
  // each tensor's values. Roles are listed in the order they are added. false (and nothing
  // added) when a size overflows 64 bits; the end offset of the last layer goes to *end.
  bool add_role(TensorRole role, TensorType type, int group, std::uint64_t rows, std::uint64_t cols,
                std::uint64_t offset, std::uint64_t* end);
  // The same with an explicit distance between layers (GGUF: tensors of one role evenly spaced
  // by the writer's order and alignment padding); `stride` >= the tensor's bytes.
  bool add_role_strided(TensorRole role, TensorType type, int group, std::uint64_t rows, std::uint64_t cols,
                        std::uint64_t offset, std::uint64_t stride, std::uint64_t* end);

 private:
  struct RoleEntry {
    bool present = false;
    TensorType type = TensorType::kF32;
    int group = 0;
    std::uint64_t rows = 0, cols = 0;
    std::uint64_t base = 0;         // offset of layer 0 (or of the one tensor)
    std::uint64_t stride = 0;       // bytes per layer
    std::uint64_t value_bytes = 0;  // per tensor
    std::uint64_t scale_bytes = 0;
  };
  RoleEntry roles_[kTensorRoleCount];
  TensorRole order_[kTensorRoleCount] = {};
  int order_count_ = 0;
};

// The value of one shape dimension under `config` (Extent::kOne: 1).
std::uint64_t extent(const ModelConfig& config, Extent e);
// The config field(s) an extent is made of ("dim", "n_layers x <name>": a kind parameter by
// the name `param_names` gives it, kind_params[i] if none), for messages and the trainer's
// schema; into out[cap], which it returns.
const char* extent_name(Extent e, const char* const* param_names, char* out, std::size_t cap);
// The shape of a role with row `row` under `config` (rows, cols) in llama2.c's layout.
void role_shape(const ModelConfig& config, const RoleInfo& row, std::uint64_t* rows, std::uint64_t* cols);

// Refuses a model one of whose tensors (values plus q8_0 scales) is larger than `max_bytes`,
// with a one-line kOutOfMemory error naming the file, the tensor and its size. The engine and
// the CLI pass SIZE_MAX before sizing anything in memory: a header is validated in 64-bit
// arithmetic, but on a 32-bit host (MIPS, Xtensa) a tensor of 4 GiB or more cannot be held,
// indexed or even sized in size_t. Tests pass a smaller limit to exercise it on 64-bit hosts.
Status check_tensors_addressable(const char* name, const ModelSpec& spec, std::uint64_t max_bytes);

}  // namespace pocketlm
