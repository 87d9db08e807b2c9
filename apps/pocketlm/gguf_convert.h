// `pocketlm convert --to gguf` (gguf_convert.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "output_file.h"
#include "pocketlm/base/status.h"
#include "pocketlm/format/gguf_writer.h"
#include "pocketlm/format/model_spec.h"

namespace pocketlm::cli {

struct GgufConvertOptions {
  std::string input;
  std::string type;       // f32, f16, q8_0, q4_0 or iq4_xs: the type of every matrix
  std::string tokenizer;  // tokenizer.bin to embed; empty: the input's own (GGUF), else none
  std::string output;
  // --tensor-type ROLE=TYPE: another type for one role's matrices ("ple_table=q4_0").
  std::vector<std::string> tensor_types;
};

// A GgufWriter's sink that writes an OutputFile.
class FileSink final : public ByteSink {
 public:
  explicit FileSink(OutputFile& out) : out_(out) {}
  Status write(const void* data, std::size_t bytes) override { return out_.write(data, bytes); }

 private:
  OutputFile& out_;
};

// The vocabulary to embed: pieces as GGUF spells them, scores, token types.
struct Vocab {
  std::vector<std::string> pieces;
  std::vector<float> scores;
  std::vector<std::int32_t> types;
  bool present() const { return !pieces.empty(); }
};

// One tensor of the output: where its values come from, its GGUF name and the ggml type written.
struct OutTensor {
  std::string name;
  TensorInfo source;
  std::uint32_t type;
  std::uint64_t bytes = 0;  // in the output (filled by write_gguf_metadata)
};

// The output's tensors in llama.cpp's order: the global tensors a token reads before the layers
// (token_embd, a PLE model's table and projection), each layer's tensors, then the other global
// ones (output_norm, output); by the role table, for whatever architecture the spec is. Norms
// are F32 and a matrix of role r `types[r]` (a ggml type), but Q4_0 for an IQ4_XS matrix whose
// rows are not whole super-blocks of 256, and F16 for a Q8_0/Q4_0 one whose rows are not whole
// blocks of 32 (its name, or "blk.N..." once for a per-layer role, goes to *fallbacks).
struct Fallback {
  std::string name;
  std::uint32_t type;  // the ggml type written instead
};
std::vector<OutTensor> plan_tensors(const ModelSpec& spec, const std::uint32_t* types, std::vector<Fallback>* fallbacks);

// Everything before the tensor data: general.architecture and name, the alignment, file type
// and quantization version, the spec's hyperparameters under its architecture's prefix (as its
// row names them), eps and RoPE's base, the tokenizer when `vocab` is given, and the tensor
// infos (each OutTensor's output bytes filled in).
Status write_gguf_metadata(GgufWriter& w, const ModelSpec& spec, const std::string& name, std::uint32_t matrix_type,
                           const Vocab* vocab, std::vector<OutTensor>& tensors);

// Writes the GGUF file; *summary says what was written (one line, no newline).
Status convert_to_gguf(const GgufConvertOptions& options, std::string* summary);

}  // namespace pocketlm::cli
