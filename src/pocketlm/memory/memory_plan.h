// MemoryPlan: every region a session will use, with its bytes and a note, computed from
// a model header and the session options before anything is allocated. It answers
// "does this model fit in N bytes, and where does every byte go?" and sizes the arena:
// arena bytes == total() (alignment padding is a region of its own).
#pragma once

#include <cstddef>
#include <cstdint>

#include "pocketlm/base/status.h"

namespace pocketlm {

struct PlanRegion {
  char name[32];
  std::uint64_t bytes;
  char note[96];
};

class MemoryPlan {
 public:
  static constexpr int kMaxRegions = 32;

  // Adds a region; regions with the same name are merged (bytes add up, first note kept).
  // A new name past kMaxRegions is an error (kOutOfMemory naming it), never a silent drop.
  Status add(const char* name, std::uint64_t bytes, const char* note);
  // Replaces the note of the named region (no-op when absent).
  void set_note(const char* name, const char* note);
  int size() const { return count_; }
  const PlanRegion& region(int i) const { return regions_[i]; }
  // Bytes of the named region, 0 if absent.
  std::uint64_t bytes_of(const char* name) const;
  // Sum of all regions (saturates at UINT64_MAX instead of wrapping).
  std::uint64_t total() const;

  // Budget in bytes (0 = none). fits() is true without a budget.
  void set_budget(std::uint64_t bytes) { budget_ = bytes; }
  std::uint64_t budget() const { return budget_; }
  bool fits() const { return budget_ == 0 || total() <= budget_; }

  // Writes the plan as a text table, one line per call of `write` (no newline included):
  // region | bytes | share of budget (or of total) | note, then the totals.
  void render(void (*write)(const char* line, void* ctx), void* ctx) const;

 private:
  PlanRegion regions_[kMaxRegions] = {};
  int count_ = 0;
  std::uint64_t budget_ = 0;
};

}  // namespace pocketlm
