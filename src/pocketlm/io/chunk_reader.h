// ChunkReader: sequential reads of small fields (a tokenizer's records) from a Storage
// through a caller-owned buffer, so that parsing never needs the whole file in memory.
#pragma once

#include <cstddef>
#include <cstdint>

#include "pocketlm/io/storage.h"

namespace pocketlm {

class ChunkReader {
 public:
  // `buffer` of `capacity` bytes (> 0) is used as the read-ahead window.
  ChunkReader(Storage& storage, std::uint64_t start, unsigned char* buffer, std::size_t capacity)
      : storage_(storage), next_offset_(start), buffer_(buffer), capacity_(capacity) {}

  // Copies the next `bytes` bytes into dst. Running past the end is a kBadFormat error
  // naming the storage and the offset at which the field started.
  Status take(void* dst, std::size_t bytes);
  // Moves past the next `bytes` bytes without copying them; running past the end of the
  // storage is the same kBadFormat error as take()'s.
  Status skip(std::uint64_t bytes);
  // Offset in the storage of the next byte take() would return.
  std::uint64_t offset() const { return next_offset_ - (end_ - pos_); }

 private:
  Status refill();

  Storage& storage_;
  std::uint64_t next_offset_;  // storage offset of buffer_[end_]
  unsigned char* buffer_;
  std::size_t capacity_;
  std::size_t pos_ = 0;
  std::size_t end_ = 0;
};

}  // namespace pocketlm
