// Storage: where model and tokenizer bytes come from. The engine never maps files: it
// reads byte ranges into memory it owns, the way a PSP reads a memory stick with sceIoRead
// or an ESP32 reads a flash partition. Ports add their own storages.
#pragma once

#include <cstddef>
#include <cstdint>

#include "pocketlm/base/status.h"

namespace pocketlm {

class Storage {
 public:
  virtual ~Storage() = default;
  // A name for error messages: the file path, or a label such as "<memory>".
  virtual const char* name() const = 0;
  // Total size in bytes.
  virtual std::uint64_t size() const = 0;
  // Reads exactly `bytes` bytes starting at `offset` into dst. A range past the end or a
  // short read is a kIoError naming the storage, the offset and the byte count.
  virtual Status read(std::uint64_t offset, void* dst, std::size_t bytes) = 0;
};

// Reads `bytes` from `offset` in calls of at most `chunk_bytes` each (as sceIoRead loops do;
// a chunk bound keeps each call short enough for a watchdog or a progress bar).
Status read_chunked(Storage& storage, std::uint64_t offset, void* dst, std::uint64_t bytes,
                    std::size_t chunk_bytes);

}  // namespace pocketlm
