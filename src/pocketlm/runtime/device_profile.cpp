#include "pocketlm/runtime/device_profile.h"

#include <cstring>

#include "pocketlm/base/format.h"

namespace pocketlm {

namespace {

constexpr std::uint64_t kMiB = 1024 * 1024;
// The ESP32-S3's flash that is not the model's partition: 64 KiB before the first app
// partition (second-stage bootloader at 0x0, partition table at 0x8000, nvs, phy_init) and
// the app partition itself (1 MiB, ESP-IDF's default "single factory app").
constexpr std::uint64_t kFirmwareBytes = 64 * 1024 + kMiB;

// Figures from shared/design/device-notes.md; each row says which.
const DeviceProfile kProfiles[] = {
    {"host", "this machine: RAM without a bound, the model file read with a prefetch thread",
     {{"ram", false, 0, 0, 0, false, "unbounded", 0, nullptr},
      {"file", true, 0, 2.0e9, 20e-6, true, "page-cache reads, order of magnitude", 0, nullptr}},
     2,
     0,
     "measured by bench on the machine itself",
     0,
     0,
     nullptr,
     nullptr},
    {"psp", "Sony PSP: 24 MiB heap, a memory stick, one 333 MHz MIPS core with a single-precision FPU",
     {{"heap", false, 24 * kMiB, 0, 0, false, "PSP_HEAP_SIZE_KB(24576) on a PSP-2000+ (device-notes 3.6)", 0, nullptr},
      {"memory stick", true, 0, 7.5e6, 2.8e-3, false,
       "7-8 MB/s measured, CPU-driven so no overlap; scattered 32 KiB reads ~4.6 MB/s, i.e. ~2.8 ms a seek "
       "(device-notes 3.3)", 0, nullptr}},
     2,
     22.5e6,
     "stories15M (15M multiply-adds/token) at 1-2 tok/s in the PSP write-up",
     480,
     272,
     "the PSP's LCD (device-notes 3.5); homebrew draws it in 32-bit 8888 with a 512-pixel line (PSP_LINE_SIZE)",
     "tiled4"},
    {"esp32s3", "ESP32-S3 N16R8: 512 KiB SRAM, 8 MiB octal PSRAM, 16 MiB flash read through the cache",
     {{"sram", false, 234056, 0, 0, false, "core SRAM left to the app with a 32 KB data cache (device-notes 1.5)", 0, nullptr},
      {"psram", false, 8 * kMiB, 60.0 * kMiB, 0, false,
       "8 MB octal PSRAM, ~60-86 MiB/s streaming; the estimate takes the low end (device-notes 1.8)", 0, nullptr},
      {"flash", true, 16 * kMiB, 40e6, 15.8e-6, false,
       "QIO flash through the cache; 15.8 us per random row (measured on the P4, device-notes 1.5)", kFirmwareBytes,
       "ESP-IDF's single-app layout: bootloader, partition table, nvs and phy_init in the first 64 KiB, then a "
       "1 MiB factory app partition"}},
     3,
     1.4e8,
     "~4M computed multiply-adds/token at 30-40 tok/s in the ESP32 write-up",
     320,
     240,
     "a 320x240 SPI LCD module (ILI9341/ST7789 class), the usual small display on S3 boards",
     "tiled4"},
    {nullptr, nullptr, {}, 0, 0, nullptr, 0, 0, nullptr, nullptr},
};

}  // namespace

const DeviceProfile* device_profiles() { return kProfiles; }

const DeviceProfile* find_device(const char* name) {
  for (const DeviceProfile* d = kProfiles; d->name; ++d)
    if (std::strcmp(d->name, name) == 0) return d;
  return nullptr;
}

void plan_tiers(const DeviceProfile& device, MemoryPlan* plan) {
  PlanTier tiers[MemoryPlan::kMaxTiers] = {};
  for (int i = 0; i < device.tier_count; ++i) {
    format_to(tiers[i].name, sizeof tiers[i].name, "%s", device.tiers[i].name);
    tiers[i].storage = device.tiers[i].storage;
    tiers[i].capacity = device.tiers[i].capacity;
    tiers[i].reserved = device.tiers[i].reserved_bytes;
  }
  plan->set_tiers(tiers, device.tier_count);
}

const DeviceTier* storage_tier(const DeviceProfile& device) {
  for (int i = 0; i < device.tier_count; ++i)
    if (device.tiers[i].storage) return &device.tiers[i];
  return nullptr;
}

}  // namespace pocketlm
