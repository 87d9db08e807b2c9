#include "ports/posix/file_storage.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <new>

namespace pocketlm {

FileStorage::~FileStorage() {
  if (file_) std::fclose(file_);
  delete[] owned_path_;
}

Status FileStorage::open(const char* path, const char* what) {
  // name() is used in errors long after open(): keep a copy, not the caller's pointer.
  const std::size_t len = std::strlen(path);
  char* copy = new (std::nothrow) char[len + 1];
  if (!copy) return Status::error(StatusCode::kOutOfMemory, "%s: no memory to open %s file", path, what);
  std::memcpy(copy, path, len + 1);
  delete[] owned_path_;
  owned_path_ = copy;
  path_ = owned_path_;
  struct stat st;
  if (::stat(path, &st) != 0)
    return Status::error(StatusCode::kNotFound, "%s: cannot open %s file: %s", path, what, std::strerror(errno));
  if (!S_ISREG(st.st_mode))
    return Status::error(StatusCode::kInvalidArgument, "%s: %s path is a %s, not a regular file", path, what,
                         S_ISDIR(st.st_mode) ? "directory" : S_ISFIFO(st.st_mode) ? "FIFO" : "special file");
  file_ = std::fopen(path, "rb");
  if (!file_)
    return Status::error(StatusCode::kNotFound, "%s: cannot open %s file: %s", path, what, std::strerror(errno));
  size_ = static_cast<std::uint64_t>(st.st_size);
  position_ = 0;
  return Status();
}

Status FileStorage::read(std::uint64_t offset, void* dst, std::size_t bytes) {
  if (offset > size_ || bytes > size_ - offset)
    return Status::error(StatusCode::kIoError, "%s: read of %zu bytes at offset %llu runs past the end (%llu bytes)",
                         path_, bytes, static_cast<unsigned long long>(offset),
                         static_cast<unsigned long long>(size_));
  if (position_ != offset) {
    if (::fseeko(file_, static_cast<off_t>(offset), SEEK_SET) != 0)
      return Status::error(StatusCode::kIoError, "%s: seek to offset %llu failed: %s", path_,
                           static_cast<unsigned long long>(offset), std::strerror(errno));
    position_ = offset;
  }
  std::size_t got = std::fread(dst, 1, bytes, file_);
  position_ += got;
  if (got != bytes)
    return Status::error(StatusCode::kIoError, "%s: short read at offset %llu: %zu of %zu bytes", path_,
                         static_cast<unsigned long long>(offset), got, bytes);
  return Status();
}

}  // namespace pocketlm
