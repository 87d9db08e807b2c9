// Arena: the one block of memory a session lives in. Every engine buffer (weights,
// KV cache, activations, tokenizer tables, sampler scratch) is carved from it by an
// aligned bump allocator; nothing is freed individually and nothing is allocated after
// the session is built. The block is either owned (one allocation of the planned size)
// or borrowed from the caller (a static buffer in firmware).
//
// A measuring arena hands out no memory: it records each request, by region name, into a
// MemoryPlan. The session runs the same carving code against a measuring arena to plan and
// against a real one to build, so the plan and the arena cannot disagree.
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

  Arena() = default;
  ~Arena();
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;

  // Allocates one block of `bytes` (rounded up to kAlignment). Errors: kOutOfMemory when
  // the host refuses, kInvalidArgument when bytes does not fit size_t.
  Status init_owned(std::uint64_t bytes);
  // Uses the caller's buffer; the usable part starts at the first aligned address.
  void init_borrowed(void* buffer, std::size_t bytes);
  // Hands out null pointers and records every request into `plan` (must outlive the arena).
  void init_measuring(MemoryPlan* plan);

  bool measuring() const { return measuring_; }

  // Carves `bytes` (rounded up to kAlignment) for `region` and returns it in *out, or a
  // kOutOfMemory error naming the region when the arena is full.
  Status allocate(std::uint64_t bytes, const char* region, void** out);

  std::uint64_t capacity() const { return capacity_; }
  // Bytes carved so far, padding included; never decreases, so it is the high-water mark.
  std::uint64_t used() const { return used_; }
  // Bytes lost to rounding allocations up to kAlignment (included in used()).
  std::uint64_t padding() const { return padding_; }

 private:
  unsigned char* base_ = nullptr;
  std::uint64_t capacity_ = 0;
  std::uint64_t used_ = 0;
  std::uint64_t padding_ = 0;
  bool owned_ = false;
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
