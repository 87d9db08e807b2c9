#include "ports/firmware/semihosting_storage.h"

#include <fcntl.h>
#include <unistd.h>

namespace pocketlm::firmware {

SemihostingStorage::SemihostingStorage(const char *path) : path_(path) {
  fd_ = ::open(path, O_RDONLY);
  if (fd_ < 0) {
    status_ = Status::error(StatusCode::kIoError, "%s: cannot open it through semihosting", path);
    return;
  }
  const off_t end = ::lseek(fd_, 0, SEEK_END);
  if (end < 0) {
    status_ = Status::error(StatusCode::kIoError, "%s: cannot find its size through semihosting", path);
    return;
  }
  size_ = static_cast<std::uint64_t>(end);
}

SemihostingStorage::~SemihostingStorage() {
  if (fd_ >= 0) ::close(fd_);
}

Status SemihostingStorage::read(std::uint64_t offset, void *dst, std::size_t bytes) {
  POCKETLM_TRY(status_);
  if (offset > size_ || bytes > size_ - offset)
    return Status::error(StatusCode::kIoError, "%s: read of %zu bytes at offset %llu runs past the end (%llu bytes)",
                         path_, bytes, static_cast<unsigned long long>(offset), static_cast<unsigned long long>(size_));
  if (::lseek(fd_, static_cast<off_t>(offset), SEEK_SET) < 0)
    return Status::error(StatusCode::kIoError, "%s: seek to offset %llu failed", path_,
                         static_cast<unsigned long long>(offset));
  auto *out = static_cast<unsigned char *>(dst);
  while (bytes > 0) {
    const ssize_t got = ::read(fd_, out, bytes);
    if (got <= 0)
      return Status::error(StatusCode::kIoError, "%s: short read at offset %llu (%zu bytes left)", path_,
                           static_cast<unsigned long long>(offset), bytes);
    out += got;
    offset += static_cast<std::uint64_t>(got);
    bytes -= static_cast<std::size_t>(got);
  }
  return Status();
}

}  // namespace pocketlm::firmware
