#include "pocketlm/memory/memory_plan.h"

#include <cstring>

#include "pocketlm/base/byte_size.h"
#include "pocketlm/base/checked.h"
#include "pocketlm/base/format.h"

namespace pocketlm {

MemoryPlan::MemoryPlan() { reset(); }

void MemoryPlan::reset() {
  count_ = 0;
  tier_count_ = 1;
  tiers_[0] = PlanTier{};
  format_to(tiers_[0].name, sizeof tiers_[0].name, "ram");
  storage_bytes_per_token_ = 0;
}

Status MemoryPlan::add(const char* name, std::uint64_t bytes, const char* note, Heat heat) {
  return add_in(0, name, bytes, note, heat);
}

Status MemoryPlan::add_stored(const char* name, std::uint64_t bytes, const char* note) {
  const int t = storage_tier();
  if (t < 0)
    return Status::error(StatusCode::kInvalidArgument, "memory plan: region '%s' is in storage but the device has none",
                         name);
  return add_in(t, name, bytes, note, Heat::kOncePerToken);
}

Status MemoryPlan::add_reserved(const char* name, std::uint64_t bytes, const char* note) {
  POCKETLM_TRY(add_in(0, name, bytes, note, Heat::kRare));
  for (int i = 0; i < count_; ++i)
    if (std::strcmp(regions_[i].name, name) == 0) regions_[i].reserved = true;
  return Status();
}

Status MemoryPlan::add_in(int tier, const char* name, std::uint64_t bytes, const char* note, Heat heat) {
  for (int i = 0; i < count_; ++i) {
    if (std::strcmp(regions_[i].name, name) == 0) {
      std::uint64_t sum = regions_[i].bytes + bytes;
      regions_[i].bytes = sum < bytes ? UINT64_MAX : sum;
      return Status();
    }
  }
  if (count_ == kMaxRegions)
    return Status::error(StatusCode::kOutOfMemory, "memory plan: region '%s' does not fit; the plan holds %d regions",
                         name, kMaxRegions);
  PlanRegion& r = regions_[count_++];
  format_to(r.name, sizeof r.name, "%s", name);
  format_to(r.note, sizeof r.note, "%s", note);
  r.bytes = bytes;
  r.tier = tier;
  r.reserved = false;
  r.heat = heat;
  return Status();
}

void MemoryPlan::set_tiers(const PlanTier* tiers, int count) {
  tier_count_ = count < kMaxTiers ? count : kMaxTiers;
  for (int i = 0; i < tier_count_; ++i) tiers_[i] = tiers[i];
}

int MemoryPlan::storage_tier() const {
  for (int i = 0; i < tier_count_; ++i)
    if (tiers_[i].storage) return i;
  return -1;
}

void MemoryPlan::set_region_tier(const char* name, int tier) {
  for (int i = 0; i < count_; ++i)
    if (std::strcmp(regions_[i].name, name) == 0) regions_[i].tier = tier;
}

int MemoryPlan::region_tier(const char* name) const {
  for (int i = 0; i < count_; ++i)
    if (std::strcmp(regions_[i].name, name) == 0) return regions_[i].tier;
  return -1;
}

std::uint64_t MemoryPlan::arena_bytes(int tier) const {
  std::uint64_t sum = 0;
  for (int i = 0; i < count_; ++i) {
    if (regions_[i].tier != tier || regions_[i].reserved || tiers_[tier].storage) continue;
    const std::uint64_t next = sum + regions_[i].bytes;
    if (next < sum) return UINT64_MAX;
    sum = next;
  }
  return sum;
}

std::uint64_t MemoryPlan::tier_total(int tier) const {
  std::uint64_t sum = 0;
  for (int i = 0; i < count_; ++i) {
    if (regions_[i].tier != tier) continue;
    const std::uint64_t next = sum + regions_[i].bytes;
    if (next < sum) return UINT64_MAX;
    sum = next;
  }
  return sum;
}

std::uint64_t MemoryPlan::budget() const {
  std::uint64_t sum = 0;
  for (int t = 0; t < tier_count_; ++t) {
    if (tiers_[t].storage) continue;
    if (tiers_[t].capacity == 0) return 0;
    sum += tiers_[t].capacity;
  }
  return sum;
}

bool MemoryPlan::file_fits() const {
  const int t = storage_tier();
  if (t < 0 || tiers_[t].capacity == 0) return true;
  const PlanTier& tier = tiers_[t];
  std::uint64_t files = 0;
  return checked_add(storage_file_bytes_, storage_tokenizer_bytes_, &files) && tier.reserved <= tier.capacity &&
         files <= tier.capacity - tier.reserved;
}

int MemoryPlan::overflowing_tier() const {
  for (int t = 0; t < tier_count_; ++t) {
    if (tiers_[t].capacity == 0) continue;
    if (tiers_[t].storage ? !file_fits() : tier_total(t) > tiers_[t].capacity) return t;
  }
  return -1;
}

std::uint64_t MemoryPlan::ram_shortfall() const {
  std::uint64_t sum = 0;
  for (int t = 0; t < tier_count_; ++t) {
    if (tiers_[t].storage || tiers_[t].capacity == 0) continue;
    const std::uint64_t need = tier_total(t);
    if (need > tiers_[t].capacity && !checked_add(sum, need - tiers_[t].capacity, &sum)) return UINT64_MAX;
  }
  return sum;
}

bool MemoryPlan::fits() const { return overflowing_tier() < 0; }

Status MemoryPlan::overflow_error(const char* model, const char* device, const char* note) const {
  const int t = overflowing_tier();
  if (t < 0) return Status();
  const PlanTier& tier = tiers_[t];
  char need_h[32], capacity_h[32];
  format_byte_size(tier.capacity, capacity_h, sizeof capacity_h);
  if (tier.storage) {
    format_byte_size(storage_file_bytes_, need_h, sizeof need_h);
    char reserved_h[32], tokenizer[96] = "";
    format_byte_size(tier.reserved, reserved_h, sizeof reserved_h);
    if (storage_tokenizer_bytes_) {
      char tokenizer_h[32];
      format_byte_size(storage_tokenizer_bytes_, tokenizer_h, sizeof tokenizer_h);
      format_to(tokenizer, sizeof tokenizer, " with its tokenizer file (%llu bytes, %s)",
                static_cast<unsigned long long>(storage_tokenizer_bytes_), tokenizer_h);
    }
    return Status::error(StatusCode::kOutOfMemory,
                         "%s: the model file (%llu bytes, %s)%s does not fit %s's %s: it holds %llu bytes (%s), %llu "
                         "(%s) of them the firmware's",
                         model, static_cast<unsigned long long>(storage_file_bytes_), need_h, tokenizer,
                         device ? device : "the device", tier.name, static_cast<unsigned long long>(tier.capacity),
                         capacity_h, static_cast<unsigned long long>(tier.reserved), reserved_h);
  }
  const std::uint64_t need = tier_total(t);
  format_byte_size(need, need_h, sizeof need_h);
  if (device)
    return Status::error(StatusCode::kOutOfMemory, "%s: the session needs %llu bytes (%s) in %s's %s but it holds %llu "
                         "bytes (%s)%s",
                         model, static_cast<unsigned long long>(need), need_h, device, tier.name,
                         static_cast<unsigned long long>(tier.capacity), capacity_h, note);
  return Status::error(StatusCode::kOutOfMemory, "%s: the session needs %llu bytes (%s) but the budget is %llu bytes "
                       "(%s)%s",
                       model, static_cast<unsigned long long>(need), need_h,
                       static_cast<unsigned long long>(tier.capacity), capacity_h, note);
}

std::uint64_t MemoryPlan::bytes_of(const char* name) const {
  for (int i = 0; i < count_; ++i)
    if (std::strcmp(regions_[i].name, name) == 0) return regions_[i].bytes;
  return 0;
}

std::uint64_t MemoryPlan::total() const {
  std::uint64_t sum = 0;
  for (int i = 0; i < count_; ++i) {
    if (tiers_[regions_[i].tier].storage || regions_[i].reserved) continue;
    std::uint64_t next = sum + regions_[i].bytes;
    if (next < sum) return UINT64_MAX;
    sum = next;
  }
  return sum;
}

void MemoryPlan::render(void (*write)(const char*, void*), void* ctx) const {
  for (int t = 0; t < tier_count_; ++t) {
    if (tiers_[t].storage && tier_total(t) == 0 && tiers_[t].capacity == 0) continue;  // nothing to say
    render_tier(t, write, ctx);
  }
}

void MemoryPlan::render_tier(int t, void (*write)(const char*, void*), void* ctx) const {
  char line[256];
  char human[32];
  const PlanTier& tier = tiers_[t];
  const bool one_table =
      tier_count_ == 1 || (tier_count_ == 2 && tiers_[1].storage && tier_total(1) == 0 && tiers_[1].capacity == 0);
  const std::uint64_t total_bytes = tier_total(t);
  const std::uint64_t capacity = tier.storage ? 0 : tier.capacity;
  const double denom = static_cast<double>(capacity ? capacity : (total_bytes ? total_bytes : 1));
  if (!one_table) {
    if (t > 0) write("", ctx);
    format_byte_size(tier.capacity, human, sizeof human);
    if (tier.storage)
      format_to(line, sizeof line, "tier %s (storage: weights read on demand)", tier.name);
    else if (tier.capacity)
      format_to(line, sizeof line, "tier %s (RAM, %s)", tier.name, human);
    else
      format_to(line, sizeof line, "tier %s (RAM)", tier.name);
    write(line, ctx);
  }
  format_to(line, sizeof line, "%-22s | %12s | %10s | %6s | %s", "region", "bytes", "size",
            capacity ? "budget" : "share", "notes");
  write(line, ctx);
  format_to(line, sizeof line, "%.22s-+-%.12s-+-%.10s-+-%.6s-+-%.30s", "------------------------------",
            "------------------------------", "------------------------------", "------------------------------",
            "------------------------------");
  write(line, ctx);
  for (int i = 0; i < count_; ++i) {
    const PlanRegion& r = regions_[i];
    if (r.tier != t) continue;
    format_byte_size(r.bytes, human, sizeof human);
    format_to(line, sizeof line, "%-22s | %12llu | %10s | %5.1f%% | %s", r.name, static_cast<unsigned long long>(r.bytes),
              human, 100.0 * static_cast<double>(r.bytes) / denom, r.note);
    write(line, ctx);
  }
  format_byte_size(total_bytes, human, sizeof human);
  if (tier.storage) {
    format_to(line, sizeof line, "%-22s | %12llu | %10s | %5.1f%% | %s", "total (in storage)",
              static_cast<unsigned long long>(total_bytes), human, 100.0, "stays in storage; no RAM");
    write(line, ctx);
    format_byte_size(storage_bytes_per_token_, human, sizeof human);
    format_to(line, sizeof line, "%-22s | %12llu | %10s | %6s | %s", "read per token",
              static_cast<unsigned long long>(storage_bytes_per_token_), human, "",
              "bytes of these weights one token's forward pass reads");
    write(line, ctx);
    if (tier.capacity) {  // the whole model file must fit the medium (flash partition)
      if (tier.reserved) {
        format_byte_size(tier.reserved, human, sizeof human);
        format_to(line, sizeof line, "%-22s | %12llu | %10s | %5.1f%% | %s", "firmware (reserved)",
                  static_cast<unsigned long long>(tier.reserved), human,
                  100.0 * static_cast<double>(tier.reserved) / static_cast<double>(tier.capacity),
                  "bootloader, partition table and the app: not the model's");
        write(line, ctx);
      }
      if (storage_tokenizer_bytes_) {
        format_byte_size(storage_tokenizer_bytes_, human, sizeof human);
        format_to(line, sizeof line, "%-22s | %12llu | %10s | %5.1f%% | %s", "tokenizer file",
                  static_cast<unsigned long long>(storage_tokenizer_bytes_), human,
                  100.0 * static_cast<double>(storage_tokenizer_bytes_) / static_cast<double>(tier.capacity),
                  "kept apart from the model, on the same medium");
        write(line, ctx);
      }
      format_byte_size(storage_file_bytes_, human, sizeof human);
      const bool ok = file_fits();
      format_to(line, sizeof line, "%-22s | %12llu | %10s | %5.1f%% | %s", "model file",
                static_cast<unsigned long long>(storage_file_bytes_), human,
                100.0 * static_cast<double>(storage_file_bytes_) / static_cast<double>(tier.capacity),
                ok ? "fits the medium" : "DOES NOT FIT the medium");
      write(line, ctx);
    }
    return;
  }
  // The arena's part of the tier (without what is reserved for the program).
  const std::uint64_t arena = arena_bytes(t);
  format_byte_size(arena, human, sizeof human);
  format_to(line, sizeof line, "%-22s | %12llu | %10s | %5.1f%% | %s", one_table ? "total (arena)" : "total (tier)",
            static_cast<unsigned long long>(arena), human, 100.0 * static_cast<double>(arena) / denom,
            one_table ? "one allocation, made before any weight byte is read; each buffer 16-byte aligned"
                      : "this tier's allocation, made before any weight byte is read");
  write(line, ctx);
  if (capacity) {
    format_byte_size(capacity, human, sizeof human);
    format_to(line, sizeof line, "%-22s | %12llu | %10s | %5.1f%% |", one_table ? "budget" : "capacity",
              static_cast<unsigned long long>(capacity), human, 100.0);
    write(line, ctx);
    const bool ok = total_bytes <= capacity;
    const std::uint64_t diff = ok ? capacity - total_bytes : total_bytes - capacity;
    format_byte_size(diff, human, sizeof human);
    format_to(line, sizeof line, "%-22s | %12llu | %10s | %5.1f%% | %s", ok ? "headroom" : "OVER BUDGET by",
              static_cast<unsigned long long>(diff), human, 100.0 * static_cast<double>(diff) / denom,
              ok ? "fits" : "does not fit");
    write(line, ctx);
  }
}

}  // namespace pocketlm
