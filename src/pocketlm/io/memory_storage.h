// MemoryStorage: a Storage over bytes already in memory (tests, fuzzers, firmware images
// linked into flash). The bytes are not copied and must outlive the storage.
#pragma once

#include <cstring>

#include "pocketlm/io/storage.h"

namespace pocketlm {

class MemoryStorage final : public Storage {
 public:
  MemoryStorage(const void* data, std::size_t size, const char* name = "<memory>")
      : data_(static_cast<const unsigned char*>(data)), size_(size), name_(name) {}

  const char* name() const override { return name_; }
  std::uint64_t size() const override { return size_; }
  Status read(std::uint64_t offset, void* dst, std::size_t bytes) override {
    if (offset > size_ || bytes > size_ - offset)
      return Status::error(StatusCode::kIoError, "%s: read of %zu bytes at offset %llu runs past the end (%zu bytes)",
                           name_, bytes, static_cast<unsigned long long>(offset), size_);
    if (bytes) std::memcpy(dst, data_ + offset, bytes);
    return Status();
  }

 private:
  const unsigned char* data_;
  std::size_t size_;
  const char* name_;
};

}  // namespace pocketlm
