// `pocketlm devices`: the device profiles, their memory tiers and read models, with sources.
#include <CLI/CLI.hpp>
#include <cstdio>

#include "cli_common.h"
#include "commands.h"
#include "pocketlm/base/byte_size.h"
#include "pocketlm/runtime/device_profile.h"

namespace pocketlm::cli {

void add_devices_command(CLI::App& app) {
  app.add_subcommand("devices", "list the device profiles (--device NAME): memory tiers, storage read models and screens");
}

int run_devices() {
  for (const DeviceProfile* d = device_profiles(); d->name; ++d) {
    std::printf("%s: %s\n", d->name, d->description);
    for (int i = 0; i < d->tier_count; ++i) {
      const DeviceTier& t = d->tiers[i];
      char capacity[32] = "unbounded";
      if (t.capacity) format_byte_size(t.capacity, capacity, sizeof capacity);
      if (t.storage)
        std::printf("  %-13s storage %-10s read %.1f MB/s, %.1f us per read, %s\n    (%s)\n", t.name, capacity,
                    t.read_bytes_per_s / 1e6, t.read_latency_s * 1e6,
                    t.reads_overlap_compute ? "overlaps compute" : "does not overlap compute", t.source);
      else
        std::printf("  %-13s RAM     %-10s (%s)\n", t.name, capacity, t.source);
    }
    if (d->macs_per_s > 0)
      std::printf("  compute       ~%.0f M multiply-adds/s, an estimate (%s)\n", d->macs_per_s / 1e6, d->compute_source);
    else
      std::printf("  compute       %s\n", d->compute_source);
    if (d->screen_width > 0)
      std::printf("  screen        %dx%d pixels, %d x %d console cells of 8x8 (%s)\n", d->screen_width, d->screen_height,
                  d->screen_width / 8, d->screen_height / 8, d->screen_source);
  }
  return kExitOk;
}

}  // namespace pocketlm::cli
