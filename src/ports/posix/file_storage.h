// FileStorage: a Storage over a regular file, read with stdio (fseeko/fread), which the
// PSP's newlib and ESP-IDF's VFS both provide. Directories, FIFOs and devices are refused
// at open, so a read can never block forever.
#pragma once

#include <cstdio>

#include "pocketlm/io/storage.h"

namespace pocketlm {

class FileStorage final : public Storage {
 public:
  FileStorage() = default;
  ~FileStorage() override;
  FileStorage(const FileStorage&) = delete;
  FileStorage& operator=(const FileStorage&) = delete;

  // Opens `path` for reading. `what` names the role in errors ("model", "tokenizer").
  // The path is copied (name() outlives the caller's string, which may be a temporary).
  // Errors: kNotFound (missing or unreadable), kInvalidArgument (not a regular file),
  // kOutOfMemory (no memory for the copy of the path).
  Status open(const char* path, const char* what);

  const char* name() const override { return path_; }
  std::uint64_t size() const override { return size_; }
  Status read(std::uint64_t offset, void* dst, std::size_t bytes) override;

 private:
  std::FILE* file_ = nullptr;
  const char* path_ = "";
  char* owned_path_ = nullptr;  // path_'s storage once open() has run
  std::uint64_t size_ = 0;
  std::uint64_t position_ = 0;  // where the stream is, to skip redundant seeks
};

}  // namespace pocketlm
