// `pocketlm convert --to gguf` (gguf_convert.cpp).
#pragma once

#include <string>

#include "pocketlm/base/status.h"

namespace pocketlm::cli {

struct GgufConvertOptions {
  std::string input;
  std::string type;       // f32, f16, q8_0 or q4_0: the type of every matrix
  std::string tokenizer;  // tokenizer.bin to embed; empty: the input's own (GGUF), else none
  std::string output;
};

// Writes the GGUF file; *summary says what was written (one line, no newline).
Status convert_to_gguf(const GgufConvertOptions& options, std::string* summary);

}  // namespace pocketlm::cli
