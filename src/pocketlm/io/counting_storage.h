// CountingStorage: a Storage decorator that counts what passes through it — read calls and
// bytes — so that "bytes read from storage" is measured where the reads happen, not derived
// by arithmetic. Sessions wrap their model storage in one.
#pragma once

#include "pocketlm/io/storage.h"

namespace pocketlm {

class CountingStorage final : public Storage {
 public:
  explicit CountingStorage(Storage* inner = nullptr) : inner_(inner) {}
  void wrap(Storage* inner) { inner_ = inner; }

  const char* name() const override { return inner_->name(); }
  std::uint64_t size() const override { return inner_->size(); }
  Status read(std::uint64_t offset, void* dst, std::size_t bytes) override {
    POCKETLM_TRY(inner_->read(offset, dst, bytes));
    ++reads_;
    if (offset != next_offset_) ++seeks_;
    next_offset_ = offset + bytes;
    bytes_ += bytes;
    return Status();
  }

  // Successful read() calls and the bytes they returned since construction; seeks are the
  // reads that did not start where the previous one ended (what a memory stick pays for).
  std::uint64_t reads() const { return reads_; }
  std::uint64_t seeks() const { return seeks_; }
  std::uint64_t bytes() const { return bytes_; }

 private:
  Storage* inner_;
  std::uint64_t reads_ = 0;
  std::uint64_t seeks_ = 0;
  std::uint64_t next_offset_ = 0;
  std::uint64_t bytes_ = 0;
};

}  // namespace pocketlm
