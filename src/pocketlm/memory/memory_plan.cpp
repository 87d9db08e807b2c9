#include "pocketlm/memory/memory_plan.h"

#include "pocketlm/base/format.h"
#include <cstring>

#include "pocketlm/base/byte_size.h"

namespace pocketlm {

Status MemoryPlan::add(const char* name, std::uint64_t bytes, const char* note) {
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
  return Status();
}

void MemoryPlan::set_note(const char* name, const char* note) {
  for (int i = 0; i < count_; ++i)
    if (std::strcmp(regions_[i].name, name) == 0) format_to(regions_[i].note, sizeof regions_[i].note, "%s", note);
}

std::uint64_t MemoryPlan::bytes_of(const char* name) const {
  for (int i = 0; i < count_; ++i)
    if (std::strcmp(regions_[i].name, name) == 0) return regions_[i].bytes;
  return 0;
}

std::uint64_t MemoryPlan::total() const {
  std::uint64_t sum = 0;
  for (int i = 0; i < count_; ++i) {
    std::uint64_t next = sum + regions_[i].bytes;
    if (next < sum) return UINT64_MAX;
    sum = next;
  }
  return sum;
}

void MemoryPlan::render(void (*write)(const char*, void*), void* ctx) const {
  char line[256];
  char human[32];
  const std::uint64_t total_bytes = total();
  const double denom = static_cast<double>(budget_ ? budget_ : (total_bytes ? total_bytes : 1));
  format_to(line, sizeof line, "%-22s | %12s | %10s | %6s | %s", "region", "bytes", "size",
                budget_ ? "budget" : "share", "notes");
  write(line, ctx);
  format_to(line, sizeof line, "%.22s-+-%.12s-+-%.10s-+-%.6s-+-%.30s", "------------------------------",
                "------------------------------", "------------------------------",
                "------------------------------", "------------------------------");
  write(line, ctx);
  for (int i = 0; i < count_; ++i) {
    const PlanRegion& r = regions_[i];
    format_byte_size(r.bytes, human, sizeof human);
    format_to(line, sizeof line, "%-22s | %12llu | %10s | %5.1f%% | %s", r.name,
                  static_cast<unsigned long long>(r.bytes), human, 100.0 * static_cast<double>(r.bytes) / denom,
                  r.note);
    write(line, ctx);
  }
  format_byte_size(total_bytes, human, sizeof human);
  format_to(line, sizeof line, "%-22s | %12llu | %10s | %5.1f%% | %s", "total (arena)",
                static_cast<unsigned long long>(total_bytes), human, 100.0 * static_cast<double>(total_bytes) / denom,
                "one allocation, made before any weight byte is read");
  write(line, ctx);
  if (budget_) {
    format_byte_size(budget_, human, sizeof human);
    format_to(line, sizeof line, "%-22s | %12llu | %10s | %5.1f%% |", "budget",
                  static_cast<unsigned long long>(budget_), human, 100.0);
    write(line, ctx);
    const bool ok = total_bytes <= budget_;
    const std::uint64_t diff = ok ? budget_ - total_bytes : total_bytes - budget_;
    format_byte_size(diff, human, sizeof human);
    format_to(line, sizeof line, "%-22s | %12llu | %10s | %5.1f%% | %s", ok ? "headroom" : "OVER BUDGET by",
                  static_cast<unsigned long long>(diff), human, 100.0 * static_cast<double>(diff) / denom,
                  ok ? "fits" : "does not fit");
    write(line, ctx);
  }
}

}  // namespace pocketlm
