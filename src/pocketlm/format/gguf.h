// GGUF v3 (llama.cpp's model container), as far as pocketlm reads and writes it: constants,
// value and tensor type codes, and the metadata keys and tensor names of the `llama`
// architecture. Layout of a file (all little-endian):
//   "GGUF", u32 version (3), u64 tensor_count, u64 metadata_kv_count,
//   metadata: per pair a string key, u32 value type, the value (strings are u64 length + bytes,
//             arrays are u32 element type + u64 count + elements),
//   tensor infos: per tensor a string name, u32 n_dims, u64 dims[n_dims] (dims[0] varies
//             fastest: a matrix [rows, cols] has dims {cols, rows}), u32 ggml type, u64 offset
//             relative to the data section,
//   padding to general.alignment (default 32), then the data section; every tensor offset is a
//   multiple of the alignment.
//
// RoPE: llama2.c's checkpoints and GGUF `llama` files keep wq and wk in the same row order.
// Both rotate interleaved pairs (x[2i], x[2i+1]) of each head: run.c does, and llama.cpp runs
// the llama architecture with its "normal" RoPE mode, which rotates adjacent pairs too. The
// Hugging Face checkpoints are the ones permuted (for rotate_half, pairs (i, i + head_size/2));
// llama2.c's export.py and llama.cpp's convert_hf_to_gguf.py both undo that permutation when
// they read them. So converting between .bin and GGUF copies wq and wk unchanged, and
// tests/gguf_golden_test.cpp checks the consequence: the same tokens from both files.
#pragma once

#include <cstdint>

namespace pocketlm::gguf {

inline constexpr std::uint32_t kMagic = 0x46554747;  // "GGUF" little-endian
inline constexpr std::uint32_t kVersion = 3;
inline constexpr std::uint32_t kDefaultAlignment = 32;
inline constexpr int kMaxDims = 4;          // GGML_MAX_DIMS
inline constexpr std::uint64_t kMaxKeyBytes = 65535;

enum ValueType : std::uint32_t {
  kUint8 = 0, kInt8 = 1, kUint16 = 2, kInt16 = 3, kUint32 = 4, kInt32 = 5, kFloat32 = 6, kBool = 7,
  kString = 8, kArray = 9, kUint64 = 10, kInt64 = 11, kFloat64 = 12, kValueTypeCount = 13
};
// "u32", "string", ...; "?" for an unknown code.
const char* value_type_name(std::uint32_t type);
// Bytes of one value of a fixed-size type; 0 for string, array and unknown codes.
int value_type_bytes(std::uint32_t type);

// ggml tensor types pocketlm reads (the others are named in errors: ggml_type_name).
enum GgmlType : std::uint32_t { kGgmlF32 = 0, kGgmlF16 = 1, kGgmlQ4_0 = 2, kGgmlQ8_0 = 8, kGgmlIQ4_XS = 23 };
// "F32", "Q4_K", ... for every ggml type code llama.cpp defines; "unknown" otherwise.
const char* ggml_type_name(std::uint32_t type);

// Token types of tokenizer.ggml.token_type (llama.cpp's llama_token_type).
enum TokenType : std::int32_t {
  kTokenNormal = 1, kTokenUnknown = 2, kTokenControl = 3, kTokenUserDefined = 4, kTokenUnused = 5, kTokenByte = 6
};

namespace key {
inline constexpr const char* kArchitecture = "general.architecture";
inline constexpr const char* kAlignment = "general.alignment";
inline constexpr const char* kName = "general.name";
inline constexpr const char* kFileType = "general.file_type";
inline constexpr const char* kQuantizationVersion = "general.quantization_version";
inline constexpr const char* kContextLength = "llama.context_length";
inline constexpr const char* kEmbeddingLength = "llama.embedding_length";
inline constexpr const char* kBlockCount = "llama.block_count";
inline constexpr const char* kFeedForwardLength = "llama.feed_forward_length";
inline constexpr const char* kHeadCount = "llama.attention.head_count";
inline constexpr const char* kHeadCountKv = "llama.attention.head_count_kv";
inline constexpr const char* kRmsEps = "llama.attention.layer_norm_rms_epsilon";
inline constexpr const char* kRopeFreqBase = "llama.rope.freq_base";
inline constexpr const char* kRopeDimensionCount = "llama.rope.dimension_count";
inline constexpr const char* kRopeScalingType = "llama.rope.scaling.type";
inline constexpr const char* kVocabSize = "llama.vocab_size";
inline constexpr const char* kTokenizerModel = "tokenizer.ggml.model";
inline constexpr const char* kTokens = "tokenizer.ggml.tokens";
inline constexpr const char* kScores = "tokenizer.ggml.scores";
inline constexpr const char* kTokenTypes = "tokenizer.ggml.token_type";
inline constexpr const char* kBosId = "tokenizer.ggml.bos_token_id";
inline constexpr const char* kEosId = "tokenizer.ggml.eos_token_id";
inline constexpr const char* kUnknownId = "tokenizer.ggml.unknown_token_id";
inline constexpr const char* kAddBos = "tokenizer.ggml.add_bos_token";
inline constexpr const char* kAddEos = "tokenizer.ggml.add_eos_token";
}  // namespace key

// llama.cpp's general.file_type (llama_ftype) of a file whose matrices are all of one type.
inline constexpr std::uint32_t kFileTypeF32 = 0, kFileTypeF16 = 1, kFileTypeQ4_0 = 2, kFileTypeQ8_0 = 7,
                                kFileTypeIQ4_XS = 30;

// SentencePiece's word-boundary mark U+2581, which GGUF vocabularies keep where llama2.c's
// tokenizer.bin has a space.
inline constexpr unsigned char kSpaceMark[3] = {0xE2, 0x96, 0x81};

}  // namespace pocketlm::gguf

namespace pocketlm::gguf {

// Rewrites a GGUF piece as llama2.c's tokenizer.bin holds it: every U+2581 becomes a space.
// Bytes are pushed one at a time (a piece may arrive in chunks); emit(byte) receives the
// output. A U+2581 split across pushes is still recognised; flush() ends a piece.
class MarkToSpace {
 public:
  template <typename Emit>
  void push(unsigned char b, Emit&& emit) {
    if (n_ == 1 && b == kSpaceMark[1]) {
      n_ = 2;
      return;
    }
    if (n_ == 2 && b == kSpaceMark[2]) {
      n_ = 0;
      emit(static_cast<unsigned char>(' '));
      return;
    }
    flush(emit);
    if (b == kSpaceMark[0])
      n_ = 1;
    else
      emit(b);
  }
  template <typename Emit>
  void flush(Emit&& emit) {
    for (int i = 0; i < n_; ++i) emit(kSpaceMark[i]);
    n_ = 0;
  }

 private:
  int n_ = 0;  // bytes of U+2581 matched so far
};

}  // namespace pocketlm::gguf
