// SemihostingStorage: a model file on the debugging host, read through the board's semihosting
// (open/lseek/read: newlib's rdimon on the Cortex-M4F, the board's own calls over Xtensa's simcall
// and MIPS's UHI; board.h). It stands in for a flash partition or a memory stick: the ESP32-shaped
// PLE model is 15 MB, the MPS2 board's code memory 4 MiB. Like a flash read API, every byte comes
// through read(); the session's CountingStorage counts them.
#pragma once

#include "pocketlm/io/storage.h"

namespace pocketlm::firmware {

class SemihostingStorage final : public Storage {
 public:
  // Opens `path` on the host; ok() says whether that worked (status() says why not).
  explicit SemihostingStorage(const char *path);
  ~SemihostingStorage() override;
  SemihostingStorage(const SemihostingStorage &) = delete;
  SemihostingStorage &operator=(const SemihostingStorage &) = delete;

  const Status &status() const { return status_; }
  const char *name() const override { return path_; }
  std::uint64_t size() const override { return size_; }
  // kIoError naming the file, offset and byte count on a range past the end or a short read.
  Status read(std::uint64_t offset, void *dst, std::size_t bytes) override;

 private:
  const char *path_;
  int fd_ = -1;
  std::uint64_t size_ = 0;
  Status status_;
};

}  // namespace pocketlm::firmware
