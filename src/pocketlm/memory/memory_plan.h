// MemoryPlan: every region a session will use, with its bytes, a note and the memory tier that
// holds it, computed from a model header and the session options before anything is
// allocated. It answers "does this model fit, and where does every byte go?" and sizes the
// arena: one block per RAM tier of exactly arena_bytes(tier), the sum of the tier's regions
// (each rounded up to the arena's alignment); total() is the sum over the RAM tiers. A device has one or more RAM tiers (the PSP's heap; an ESP32-S3's SRAM and PSRAM) and
// may have a storage tier (memory stick, flash) whose regions are weights read on demand: they
// take no RAM, and the plan says how many of their bytes one token reads.
#pragma once

#include <cstddef>
#include <cstdint>

#include "pocketlm/base/status.h"

namespace pocketlm {

// How often one token's pass touches a region's bytes. Regions go to the fastest RAM tier that
// holds them, hottest first (assign_ram_tiers in runtime/placement.h).
enum class Heat : std::uint8_t {
  kRare,          // at load, encode or turn boundaries only (tokenizer tables, read buffers)
  kRowPerToken,   // one row of a table per token (a row-gather table)
  kOncePerToken,  // read about once per token (weights, the KV cache)
  kManyPerToken,  // read and written many times per token (activations, scratch, small tables)
};

struct PlanRegion {
  char name[32];
  std::uint64_t bytes;
  char note[96];
  int tier;  // index into the plan's tiers
  bool reserved;  // bytes of the tier that are not the arena's (the program itself)
  Heat heat;
};

struct PlanTier {
  char name[24];           // "heap", "sram", "psram", "memory stick", ...
  bool storage;            // read on demand (not part of the arena)
  std::uint64_t capacity;  // bytes; 0 = unbounded
  std::uint64_t reserved;  // storage: bytes of the medium that are not the model's (firmware)
};

class MemoryPlan {
 public:
  static constexpr int kMaxRegions = 32;
  static constexpr int kMaxTiers = 4;

  // A plan starts with one RAM tier, "ram", of unbounded capacity.
  MemoryPlan();
  // Back to a new plan, in place (a MemoryPlan is ~5 KiB: no temporaries on small stacks).
  void reset();

  // Adds a region in the first RAM tier; regions with the same name are merged (bytes add
  // up, first note and heat kept). A new name past kMaxRegions is an error (kOutOfMemory
  // naming it), never a silent drop.
  Status add(const char* name, std::uint64_t bytes, const char* note, Heat heat = Heat::kManyPerToken);
  // Adds a region of weights that stay in the storage tier (there must be one).
  Status add_stored(const char* name, std::uint64_t bytes, const char* note);
  // Adds bytes of the first RAM tier that the arena cannot use (the program, its stacks and
  // libraries when --heap bounds the whole process): counted against the tier, not in total().
  Status add_reserved(const char* name, std::uint64_t bytes, const char* note);

  // Replaces the tiers (RAM tiers first, fastest first; at most one storage tier, last).
  // Regions keep their index, so set tiers before adding regions.
  void set_tiers(const PlanTier* tiers, int count);
  int tier_count() const { return tier_count_; }
  const PlanTier& tier(int i) const { return tiers_[i]; }
  // The storage tier's index, or -1.
  int storage_tier() const;
  // Moves the named region to RAM tier `tier`.
  void set_region_tier(const char* name, int tier);
  // The tier of the named region, or -1 when the plan has none of that name.
  int region_tier(const char* name) const;
  // Bytes of RAM regions in `tier`.
  std::uint64_t tier_total(int tier) const;
  // Of those, the arena's (without what is reserved for the program): its block in that tier.
  std::uint64_t arena_bytes(int tier) const;
  // Bytes of the model file, which the storage tier holds whole (checked against its capacity).
  void set_storage_file_bytes(std::uint64_t bytes) { storage_file_bytes_ = bytes; }
  std::uint64_t storage_file_bytes() const { return storage_file_bytes_; }
  // Bytes of a tokenizer file kept apart from the model (0: none, or the model's own): the
  // medium holds it too, so the storage tier's check counts it with the model file.
  void set_storage_tokenizer_bytes(std::uint64_t bytes) { storage_tokenizer_bytes_ = bytes; }
  std::uint64_t storage_tokenizer_bytes() const { return storage_tokenizer_bytes_; }
  // Bytes of weights in storage that one token's forward pass reads (set by the planner).
  void set_storage_bytes_per_token(std::uint64_t bytes) { storage_bytes_per_token_ = bytes; }
  std::uint64_t storage_bytes_per_token() const { return storage_bytes_per_token_; }
  int size() const { return count_; }
  const PlanRegion& region(int i) const { return regions_[i]; }
  // Bytes of the named region, 0 if absent.
  std::uint64_t bytes_of(const char* name) const;
  // Sum of the RAM regions: the arena's blocks (saturates at UINT64_MAX instead of wrapping).
  std::uint64_t total() const;

  // Budget in bytes (0 = none): the capacity of the first RAM tier (--heap). budget() is the
  // sum of the RAM tiers' capacities (0 when one of them is unbounded).
  void set_budget(std::uint64_t bytes) { tiers_[0].capacity = bytes; }
  std::uint64_t budget() const;
  // Whether every RAM tier holds its regions and the storage medium the model file and a
  // separate tokenizer file (with its reserved bytes).
  bool fits() const;
  // Whether the storage tier holds the model file, a separate tokenizer file and the tier's
  // reserved bytes.
  bool file_fits() const;
  // The first tier that does not hold what the plan puts in it (a RAM tier over capacity, or
  // the storage medium), or -1 when the plan fits.
  int overflowing_tier() const;
  // Bytes by which the RAM tiers together exceed their capacities (0 when they all hold their
  // regions): what the weight planner must free by leaving weights in storage.
  std::uint64_t ram_shortfall() const;
  // The one-line error for a plan that does not fit: the tier, what it needs and holds (the
  // model file and the firmware's share for storage). `model` names the file; `device` the
  // profile (nullptr: the host, whose one RAM tier is --heap); `note` is appended.
  Status overflow_error(const char* model, const char* device, const char* note) const;

  // Writes the plan as text tables, one line per call of `write` (no newline included): one
  // table per tier (region | bytes | share of capacity (or of total) | note), with the totals
  // and, for a storage tier, the bytes read per token. A plan with one RAM tier and nothing in
  // storage is one table.
  void render(void (*write)(const char* line, void* ctx), void* ctx) const;

 private:
  Status add_in(int tier, const char* name, std::uint64_t bytes, const char* note, Heat heat);
  void render_tier(int tier, void (*write)(const char* line, void* ctx), void* ctx) const;

  PlanRegion regions_[kMaxRegions] = {};
  int count_ = 0;
  PlanTier tiers_[kMaxTiers] = {};
  int tier_count_ = 1;
  std::uint64_t storage_bytes_per_token_ = 0;
  std::uint64_t storage_file_bytes_ = 0;
  std::uint64_t storage_tokenizer_bytes_ = 0;
};

}  // namespace pocketlm
