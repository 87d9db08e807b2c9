// RAM for a session's arena in 2 MiB pages, where the kernel gives them on request (Linux's
// transparent huge pages in "madvise" mode, the default of Debian and most distributions).
// Decode reads every weight byte once per token: a model of hundreds of megabytes in 4 KiB
// pages walks the page tables for every page it streams, and the first touch of each page is a
// fault (several microseconds in a VM). The engine takes the block as a borrowed tier buffer
// (SessionOptions::tier_buffers); nothing here is part of the engine.
#pragma once

#include <cstddef>

namespace pocketlm {

class HugePageBlock {
 public:
  HugePageBlock() = default;
  ~HugePageBlock();
  HugePageBlock(const HugePageBlock&) = delete;
  HugePageBlock& operator=(const HugePageBlock&) = delete;

  // `bytes` rounded up to whole 2 MiB pages, 2 MiB aligned, asked for in huge pages (a hint: the
  // kernel may still give 4 KiB ones). False when no memory; then data() is null.
  bool allocate(std::size_t bytes);
  void* data() const { return data_; }
  std::size_t size() const { return size_; }

  static constexpr std::size_t kPageBytes = std::size_t{2} << 20;

 private:
  void* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace pocketlm
