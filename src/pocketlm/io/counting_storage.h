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
    bytes_ += bytes;
    return Status();
  }

  // Successful read() calls and the bytes they returned since construction.
  std::uint64_t reads() const { return reads_; }
  std::uint64_t bytes() const { return bytes_; }

 private:
  Storage* inner_;
  std::uint64_t reads_ = 0;
  std::uint64_t bytes_ = 0;
};

}  // namespace pocketlm
