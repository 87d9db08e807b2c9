#include "pocketlm/memory/arena.h"

#include <new>

#include "pocketlm/base/checked.h"
#include "pocketlm/memory/memory_plan.h"

namespace pocketlm {

static_assert(Arena::kMaxTiers == MemoryPlan::kMaxTiers, "one arena block per plan tier");

Arena::~Arena() {
  for (Block& b : blocks_)
    if (b.owned) ::operator delete(b.base, std::align_val_t(kAlignment));
}

Status Arena::init_owned(int tier, std::uint64_t bytes) {
  std::uint64_t rounded = 0;
  if (!checked_align_up(bytes, kAlignment, &rounded) || !fits_size_t(rounded))
    return Status::error(StatusCode::kInvalidArgument, "arena: %llu bytes do not fit this machine's address space",
                         static_cast<unsigned long long>(bytes));
  void* p = ::operator new(static_cast<std::size_t>(rounded), std::align_val_t(kAlignment), std::nothrow);
  if (!p && rounded > 0)
    return Status::error(StatusCode::kOutOfMemory, "arena: the host refused %llu bytes",
                         static_cast<unsigned long long>(rounded));
  Block& b = blocks_[tier];
  if (b.owned) ::operator delete(b.base, std::align_val_t(kAlignment));
  b = Block{static_cast<unsigned char*>(p), rounded, 0, true};
  return Status();
}

void Arena::init_borrowed(int tier, void* buffer, std::size_t bytes) {
  const auto addr = reinterpret_cast<std::uintptr_t>(buffer);
  const std::size_t skip = (kAlignment - addr % kAlignment) % kAlignment;
  Block& b = blocks_[tier];
  if (b.owned) ::operator delete(b.base, std::align_val_t(kAlignment));
  b = Block{static_cast<unsigned char*>(buffer) + (skip <= bytes ? skip : bytes), skip <= bytes ? bytes - skip : 0, 0,
            false};
}

void Arena::init_measuring(MemoryPlan* plan) {
  measuring_ = true;
  blocks_[0] = Block{nullptr, UINT64_MAX, 0, false};
  recorder_ = plan;
}

std::uint64_t Arena::used() const {
  std::uint64_t sum = 0;
  for (const Block& b : blocks_) sum += b.used;
  return sum;
}

Status Arena::allocate(std::uint64_t bytes, const char* region, void** out) {
  int tier = 0;
  if (placement_) {
    tier = placement_->region_tier(region);
    if (tier < 0 || tier >= kMaxTiers)
      return Status::error(StatusCode::kInvalidArgument, "arena: region %s is not in the memory plan", region);
  }
  Block& b = blocks_[tier];
  std::uint64_t rounded = 0;
  if (!checked_align_up(bytes, kAlignment, &rounded) || rounded > b.capacity - b.used)
    return Status::error(StatusCode::kOutOfMemory,
                         "arena: %s needs %llu more bytes but only %llu of tier %d's %llu are left", region,
                         static_cast<unsigned long long>(bytes), static_cast<unsigned long long>(b.capacity - b.used),
                         tier, static_cast<unsigned long long>(b.capacity));
  // The plan records what the block gives: the region's bytes with its alignment.
  if (recorder_) POCKETLM_TRY(recorder_->add(region, rounded, ""));
  *out = measuring_ ? nullptr : b.base + b.used;
  b.used += rounded;
  return Status();
}

}  // namespace pocketlm
