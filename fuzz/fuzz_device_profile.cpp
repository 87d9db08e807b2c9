// Fuzzes the device-profile parser behind --device-file (apps/pocketlm/device_catalog.h):
// arbitrary bytes as a profile. A profile it accepts must be well formed (1 to kMaxTiers
// tiers, RAM first, at most one storage tier and last, the firmware's share within the
// capacity, a screen of at least one console cell), must survive the round trip through
// `devices --json`'s form unchanged, and must give a MemoryPlan its tiers.
#include <cstdlib>
#include <cstring>
#include <string>

#include "device_catalog.h"
#include "fuzz_common.h"
#include "json_output.h"

using namespace pocketlm;

namespace {

bool same(const char* a, const char* b) { return (!a && !b) || (a && b && std::strcmp(a, b) == 0); }

bool same_profile(const DeviceProfile& a, const DeviceProfile& b) {
  if (!same(a.name, b.name) || !same(a.description, b.description) || !same(a.kernels, b.kernels) ||
      a.tier_count != b.tier_count || a.macs_per_s != b.macs_per_s || a.screen_width != b.screen_width ||
      a.screen_height != b.screen_height)
    return false;
  for (int i = 0; i < a.tier_count; ++i) {
    const DeviceTier &x = a.tiers[i], &y = b.tiers[i];
    if (!same(x.name, y.name) || x.storage != y.storage || x.capacity != y.capacity ||
        x.read_bytes_per_s != y.read_bytes_per_s || x.read_latency_s != y.read_latency_s ||
        x.reads_overlap_compute != y.reads_overlap_compute || x.reserved_bytes != y.reserved_bytes)
      return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  cli::DeviceCatalog catalog;
  const DeviceProfile* p = nullptr;
  const std::string text(reinterpret_cast<const char*>(data), size);
  if (!catalog.add_json(text, "fuzz.json", &p).ok()) return 0;
  if (p->tier_count < 1 || p->tier_count > MemoryPlan::kMaxTiers || p->tiers[0].storage) std::abort();
  for (int i = 0; i < p->tier_count; ++i) {
    const DeviceTier& t = p->tiers[i];
    if (t.storage && i != p->tier_count - 1) std::abort();
    if (t.capacity && t.reserved_bytes > t.capacity) std::abort();
  }
  if (p->screen_width != 0 && (p->screen_width < 8 || p->screen_height < 8)) std::abort();
  cli::DeviceCatalog again;
  const DeviceProfile* q = nullptr;
  if (!again.add_json(cli::device_json(*p).dump(), "round-trip.json", &q).ok() || !same_profile(*p, *q)) std::abort();
  MemoryPlan plan;
  plan_tiers(*p, &plan);
  if (plan.tier_count() != p->tier_count || plan.fits() != true) std::abort();
  return 0;
}
