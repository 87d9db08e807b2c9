// Model readers, registered in one table and chosen by probing a file's first bytes. Each
// reader turns its format into a ModelSpec; a new format (GGUF) is one file with a reader and
// one row in model_reader.cpp.
#pragma once

#include <cstddef>

#include "pocketlm/format/model_spec.h"
#include "pocketlm/io/storage.h"

namespace pocketlm {

struct ModelReader {
  const char* name;  // "llama2.c", ...
  // Whether the file's first `n` bytes (n <= kProbeBytes; fewer for a shorter file) look like
  // this format. The table is probed in order; the last reader may accept anything.
  bool (*probe)(const unsigned char* head, std::size_t n);
  Status (*read)(Storage& storage, ModelSpec* spec);
};

inline constexpr std::size_t kProbeBytes = 16;

// The registered readers, terminated by an entry with a null name.
const ModelReader* model_readers();

// Reads the spec of `storage` with the first reader whose probe accepts it. Errors are the
// reader's (one line naming the file, the field and the value).
Status read_model_spec(Storage& storage, ModelSpec* spec);

}  // namespace pocketlm
