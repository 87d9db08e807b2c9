// Reader for GGUF v3 files (format/gguf.h; its byte layer is format/gguf_parser.h): metadata into
// ModelConfig, the tensor table into ModelSpec roles, and the embedded tokenizer located for
// text/gguf_tokenizer.cpp. The header is read once, front to back, through a small buffer (the
// tensor-info table a second time to check it); no tensor byte is read here.
//
// Every count, length and offset is hostile input and is checked with overflow-checked
// arithmetic against the file size before it is used: the header counts, each key and string
// length, each array length, each tensor's dimensions, type, offset, alignment and extent, and
// that no two tensors overlap. Errors are one line naming the file, the key or tensor and the
// value. Beyond the format, pocketlm needs:
// - general.architecture "llama" and its hyperparameters (llama.embedding_length, ...);
// - exactly the llama tensors (token_embd, blk.N.{attn_norm,attn_q,attn_k,attn_v,attn_output,
//   ffn_norm,ffn_gate,ffn_down,ffn_up}, output_norm, optional output) in F32, F16, Q8_0, Q4_0 or
//   IQ4_XS, norms in F32, one type per kind of tensor, and the layers of one kind evenly spaced in the
//   data section (as llama.cpp and pocketlm write them: layer by layer, the same sizes).
#pragma once

#include <cstddef>

#include "pocketlm/format/model_spec.h"
#include "pocketlm/io/storage.h"

namespace pocketlm {

// Whether a file's first bytes are GGUF's magic.
bool probe_gguf(const unsigned char* head, std::size_t n);

Status read_gguf_spec(Storage& storage, ModelSpec* spec);

}  // namespace pocketlm
