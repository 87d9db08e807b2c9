#include "ports/posix/huge_pages.h"

#include <sys/mman.h>

#include <cstdlib>

namespace pocketlm {

HugePageBlock::~HugePageBlock() { std::free(data_); }

bool HugePageBlock::allocate(std::size_t bytes) {
  std::free(data_);
  size_ = (bytes + kPageBytes - 1) / kPageBytes * kPageBytes;
  data_ = std::aligned_alloc(kPageBytes, size_);
  if (!data_) {
    size_ = 0;
    return false;
  }
#if defined(MADV_HUGEPAGE)
  ::madvise(data_, size_, MADV_HUGEPAGE);  // a hint; refused or ignored, the pages are 4 KiB
#endif
  return true;
}

}  // namespace pocketlm
