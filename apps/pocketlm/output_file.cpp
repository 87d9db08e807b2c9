#include "output_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace pocketlm::cli {

OutputFile::~OutputFile() { discard(); }

void OutputFile::discard() {
  if (file_) {
    std::fclose(file_);
    file_ = nullptr;
  }
  if (!temp_path_.empty()) {
    std::remove(temp_path_.c_str());
    temp_path_.clear();
  }
}

Status OutputFile::open(const std::string& path, const char* flag) {
  discard();
  path_ = path;
  flag_ = flag;
  std::string templ = path + ".tmp-XXXXXX";
  int fd = ::mkstemp(templ.data());
  if (fd < 0)
    return Status::error(StatusCode::kIoError, "%s: cannot create %s: %s", flag, path.c_str(), std::strerror(errno));
  ::fchmod(fd, 0644);
  temp_path_ = templ;
  file_ = ::fdopen(fd, "wb");
  if (!file_) {
    ::close(fd);
    discard();
    return Status::error(StatusCode::kIoError, "%s: cannot write %s: %s", flag, path.c_str(), std::strerror(errno));
  }
  return Status();
}

Status OutputFile::write(const void* data, std::size_t bytes) {
  if (bytes && std::fwrite(data, 1, bytes, file_) != bytes) {
    const int err = errno;
    discard();
    return Status::error(StatusCode::kIoError, "%s: writing %s failed: %s", flag_, path_.c_str(), std::strerror(err));
  }
  return Status();
}

Status OutputFile::commit() {
  const bool flushed = std::fflush(file_) == 0 && ::fsync(::fileno(file_)) == 0;
  const int err = errno;
  const bool closed = std::fclose(file_) == 0;
  file_ = nullptr;
  if (!flushed || !closed) {
    discard();
    return Status::error(StatusCode::kIoError, "%s: writing %s failed: %s", flag_, path_.c_str(), std::strerror(err));
  }
  if (std::rename(temp_path_.c_str(), path_.c_str()) != 0) {
    const int rerr = errno;
    discard();
    return Status::error(StatusCode::kIoError, "%s: cannot rename the output into %s: %s", flag_, path_.c_str(),
                         std::strerror(rerr));
  }
  temp_path_.clear();
  return Status();
}

}  // namespace pocketlm::cli
