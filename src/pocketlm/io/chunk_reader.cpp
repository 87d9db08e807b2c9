#include "pocketlm/io/chunk_reader.h"

#include <cstring>

namespace pocketlm {

Status read_chunked(Storage& storage, std::uint64_t offset, void* dst, std::uint64_t bytes,
                    std::size_t chunk_bytes) {
  auto* out = static_cast<unsigned char*>(dst);
  while (bytes > 0) {
    std::size_t n = bytes < chunk_bytes ? static_cast<std::size_t>(bytes) : chunk_bytes;
    POCKETLM_TRY(storage.read(offset, out, n));
    out += n;
    offset += n;
    bytes -= n;
  }
  return Status();
}

Status ChunkReader::refill() {
  std::uint64_t left = storage_.size() > next_offset_ ? storage_.size() - next_offset_ : 0;
  std::size_t n = left < capacity_ ? static_cast<std::size_t>(left) : capacity_;
  if (n > 0) POCKETLM_TRY(storage_.read(next_offset_, buffer_, n));
  pos_ = 0;
  end_ = n;
  next_offset_ += n;
  return Status();
}

Status ChunkReader::skip(std::uint64_t bytes) {
  const std::uint64_t at = offset();
  if (bytes > storage_.size() || at > storage_.size() - bytes)
    return Status::error(StatusCode::kBadFormat, "%s: unexpected end of file in a field starting at offset %llu",
                         storage_.name(), static_cast<unsigned long long>(at));
  if (bytes <= end_ - pos_) {
    pos_ += static_cast<std::size_t>(bytes);
    return Status();
  }
  next_offset_ = at + bytes;
  pos_ = end_ = 0;
  return Status();
}

Status ChunkReader::take(void* dst, std::size_t bytes) {
  const std::uint64_t field_offset = offset();
  auto* out = static_cast<unsigned char*>(dst);
  while (bytes > 0) {
    if (pos_ == end_) {
      POCKETLM_TRY(refill());
      if (end_ == 0)
        return Status::error(StatusCode::kBadFormat, "%s: unexpected end of file in a field starting at offset %llu",
                             storage_.name(), static_cast<unsigned long long>(field_offset));
    }
    std::size_t n = end_ - pos_ < bytes ? end_ - pos_ : bytes;
    std::memcpy(out, buffer_ + pos_, n);
    pos_ += n;
    out += n;
    bytes -= n;
  }
  return Status();
}

}  // namespace pocketlm
