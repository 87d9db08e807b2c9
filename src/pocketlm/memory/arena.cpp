#include "pocketlm/memory/arena.h"

#include <new>

#include "pocketlm/base/checked.h"
#include "pocketlm/memory/memory_plan.h"

namespace pocketlm {

Arena::~Arena() {
  if (owned_) ::operator delete(base_, std::align_val_t(kAlignment));
}

Status Arena::init_owned(std::uint64_t bytes) {
  std::uint64_t rounded = 0;
  if (!checked_align_up(bytes, kAlignment, &rounded) || !fits_size_t(rounded))
    return Status::error(StatusCode::kInvalidArgument, "arena: %llu bytes do not fit this machine's address space",
                         static_cast<unsigned long long>(bytes));
  void* p = ::operator new(static_cast<std::size_t>(rounded), std::align_val_t(kAlignment), std::nothrow);
  if (!p && rounded > 0)
    return Status::error(StatusCode::kOutOfMemory, "arena: the host refused %llu bytes",
                         static_cast<unsigned long long>(rounded));
  base_ = static_cast<unsigned char*>(p);
  capacity_ = rounded;
  used_ = 0;
  owned_ = true;
  return Status();
}

void Arena::init_borrowed(void* buffer, std::size_t bytes) {
  const auto addr = reinterpret_cast<std::uintptr_t>(buffer);
  const std::size_t skip = (kAlignment - addr % kAlignment) % kAlignment;
  base_ = static_cast<unsigned char*>(buffer) + (skip <= bytes ? skip : bytes);
  capacity_ = skip <= bytes ? bytes - skip : 0;
  used_ = 0;
  owned_ = false;
}

void Arena::init_measuring(MemoryPlan* plan) {
  measuring_ = true;
  capacity_ = UINT64_MAX;
  used_ = 0;
  padding_ = 0;
  recorder_ = plan;
}

Status Arena::allocate(std::uint64_t bytes, const char* region, void** out) {
  std::uint64_t rounded = 0;
  if (!checked_align_up(bytes, kAlignment, &rounded) || rounded > capacity_ - used_)
    return Status::error(StatusCode::kOutOfMemory,
                         "arena: %s needs %llu more bytes but only %llu of %llu are left", region,
                         static_cast<unsigned long long>(bytes), static_cast<unsigned long long>(capacity_ - used_),
                         static_cast<unsigned long long>(capacity_));
  if (recorder_) POCKETLM_TRY(recorder_->add(region, bytes, ""));
  *out = measuring_ ? nullptr : base_ + used_;
  used_ += rounded;
  padding_ += rounded - bytes;
  return Status();
}

}  // namespace pocketlm
