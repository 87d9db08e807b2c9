// `pocketlm devices`: the device profiles, their memory tiers and read models, with sources.
#include <CLI/CLI.hpp>
#include <cstdio>

#include "cli_common.h"
#include "commands.h"
#include "json_output.h"
#include "pocketlm/base/byte_size.h"
#include "pocketlm/runtime/device_profile.h"

namespace pocketlm::cli {

void add_devices_command(CLI::App& app, DevicesOptions& o) {
  CLI::App* cmd =
      app.add_subcommand("devices", "list the device profiles (--device NAME): memory tiers, storage read models and screens");
  cmd->add_option("name", o.name, "one profile (default: all)")->type_name(device_choices());
  add_json_flag(cmd, &o.json);
}

int run_devices(const DevicesOptions& o) {
  const DeviceCatalog& catalog = DeviceCatalog::builtin();
  if (!o.name.empty() && !catalog.find(o.name))
    return fail("devices: '" + o.name + "' is not a device profile (profiles: " + device_choices() + ")");
  if (o.json) {
    // One profile: its object; all: an array of them.
    if (!o.name.empty()) {
      print_json(device_json(*catalog.find(o.name)));
      return kExitOk;
    }
    nlohmann::json all = nlohmann::json::array();
    for (const DeviceProfile* d : catalog.all()) all.push_back(device_json(*d));
    print_json(all);
    return kExitOk;
  }
  for (const DeviceProfile* d : catalog.all()) {
    if (!o.name.empty() && o.name != d->name) continue;
    std::printf("%s: %s\n", d->name, d->description);
    for (int i = 0; i < d->tier_count; ++i) {
      const DeviceTier& t = d->tiers[i];
      char capacity[32] = "unbounded";
      if (t.capacity) format_byte_size(t.capacity, capacity, sizeof capacity);
      if (t.storage) {
        std::printf("  %-13s storage %-10s read %.1f MB/s, %.1f us per read, %s\n    (%s)\n", t.name, capacity,
                    t.read_bytes_per_s / 1e6, t.read_latency_s * 1e6,
                    t.reads_overlap_compute ? "overlaps compute" : "does not overlap compute", t.source);
        if (t.reserved_bytes) {
          char reserved[32];
          format_byte_size(t.reserved_bytes, reserved, sizeof reserved);
          std::printf("    %s of it reserved for the firmware (%s)\n", reserved, t.reserved_source);
        }
      } else if (t.read_bytes_per_s > 0) {
        std::printf("  %-13s RAM     %-10s read %.1f MB/s (%s)\n", t.name, capacity, t.read_bytes_per_s / 1e6, t.source);
      } else {
        std::printf("  %-13s RAM     %-10s (%s)\n", t.name, capacity, t.source);
      }
    }
    if (d->macs_per_s > 0)
      std::printf("  compute       ~%.0f M multiply-adds/s, an estimate (%s)\n", d->macs_per_s / 1e6, d->compute_source);
    else
      std::printf("  compute       %s\n", d->compute_source);
    if (d->kernels) std::printf("  kernels       %s (plans and runs with --device use them)\n", d->kernels);
    if (d->screen_width > 0)
      std::printf("  screen        %dx%d pixels, %d x %d console cells of 8x8 (%s)\n", d->screen_width, d->screen_height,
                  d->screen_width / 8, d->screen_height / 8, d->screen_source);
  }
  return kExitOk;
}

}  // namespace pocketlm::cli
