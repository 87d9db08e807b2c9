// Arena: the memory a session lives in, one block per RAM tier (the PSP's heap; an ESP32-S3's
// SRAM and PSRAM). Every engine buffer (weights, KV cache, activations, tokenizer tables,
// sampler scratch) is carved from it by an aligned bump allocator, in the block of the tier
// its region is placed in; nothing is freed individually and nothing is allocated after the
// session is built. Each block is either owned (one allocation of the planned size) or
// borrowed from the caller (a static buffer or a heap_caps_malloc in firmware), as TensorFlow
// Lite Micro's allocator takes the caller's buffers.
//
// A measuring arena hands out no memory: it records each request, by region name and rounded
// up to the alignment, into a MemoryPlan. The session runs the same carving code against a
// measuring arena to plan and against a real one to build, so the plan and the arena cannot
// disagree: a tier's block is exactly the sum of its regions.
#pragma once

#include <cstddef>
#include <cstdint>

#include "pocketlm/base/status.h"

namespace pocketlm {

class MemoryPlan;

class Arena {
 public:
  // Every allocation starts on this boundary: the PSP VFPU's lv.q and the ESP32-S3's
  // EE.VLD.128 need 16-byte aligned operands (design/device-notes.md).
  static constexpr std::size_t kAlignment = 16;
  static constexpr int kMaxTiers = 4;  // MemoryPlan::kMaxTiers

  Arena() = default;
  ~Arena();
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;

  // One block for every region: allocates `bytes` (rounded up to kAlignment). Errors:
  // kOutOfMemory when the host refuses, kInvalidArgument when bytes does not fit size_t.
  Status init_owned(std::uint64_t bytes) { return init_owned(0, bytes); }
  // One block for every region: the caller's buffer, from its first aligned address.
  void init_borrowed(void* buffer, std::size_t bytes) { init_borrowed(0, buffer, bytes); }
  // Hands out null pointers and records every request into `plan` (must outlive the arena).
  void init_measuring(MemoryPlan* plan);

  // Tiers: every region is carved from the block of the RAM tier `plan` places it in
  // (PlanRegion::tier; `plan` must outlive the arena); each tier's block is set with one of the
  // two calls after it (a tier without regions needs none).
  void place_by(const MemoryPlan* plan) { placement_ = plan; }
  Status init_owned(int tier, std::uint64_t bytes);
  void init_borrowed(int tier, void* buffer, std::size_t bytes);

  bool measuring() const { return measuring_; }

  // Carves `bytes` (rounded up to kAlignment) for `region` from its tier's block and returns it
  // in *out, or a kOutOfMemory error naming the region and the tier when that block is full
  // (kInvalidArgument for a region the placing plan does not hold).
  Status allocate(std::uint64_t bytes, const char* region, void** out);

  // Of tier `tier`'s block: usable bytes, bytes carved (alignment included), first usable byte.
  std::uint64_t capacity(int tier = 0) const { return blocks_[tier].capacity; }
  std::uint64_t used(int tier) const { return blocks_[tier].used; }
  const unsigned char* base(int tier) const { return blocks_[tier].base; }
  // Bytes carved from every block; never decreases, so it is the high-water mark.
  std::uint64_t used() const;

 private:
  struct Block {
    unsigned char* base = nullptr;
    std::uint64_t capacity = 0;
    std::uint64_t used = 0;
    bool owned = false;
  };
  Block blocks_[kMaxTiers];
  const MemoryPlan* placement_ = nullptr;
  bool measuring_ = false;
  MemoryPlan* recorder_ = nullptr;
};

// Carves `count` elements of T for `region` (count * sizeof(T) overflow-checked: a hostile
// header's sizes reach here).
template <typename T>
Status carve_array(Arena& arena, const char* region, std::uint64_t count, T** out) {
  std::uint64_t bytes = 0;
  if (__builtin_mul_overflow(count, static_cast<std::uint64_t>(sizeof(T)), &bytes))
    return Status::error(StatusCode::kOutOfMemory, "%s: %llu elements of %zu bytes overflow 64 bits", region,
                         static_cast<unsigned long long>(count), sizeof(T));
  void* p = nullptr;
  POCKETLM_TRY(arena.allocate(bytes, region, &p));
  *out = static_cast<T*>(p);
  return Status();
}

}  // namespace pocketlm
