// The device profiles the CLI passes to the engine: the built-in ones (devices/*.json,
// compiled in) and a user's board from --device-file, both read by one parser, in the form
// `pocketlm devices --json NAME` prints (docs/json.md). The engine only sees DeviceProfile.
#pragma once

#include <deque>
#include <string>
#include <vector>

#include "pocketlm/base/status.h"
#include "pocketlm/runtime/device_profile.h"

namespace pocketlm::cli {

struct BuiltinDevice {
  const char* file;  // "devices/esp32s3.json"
  const char* json;
};
// Generated from devices/*.json (cmake/embed_devices.cmake); ends with {nullptr, nullptr}.
extern const BuiltinDevice kBuiltinDevices[];

class DeviceCatalog {
 public:
  // The built-in profiles, parsed on first use (a malformed built-in file aborts the program
  // with its message: it is a build error, not a user's).
  static DeviceCatalog& builtin();

  // Parses one profile from JSON text; errors name `label` (the file) and the field, e.g.
  // "board.json: tiers[1].capacity: -5 is negative (bytes, or null for unbounded)".
  Status add_json(const std::string& text, const std::string& label, const DeviceProfile** out);
  // Reads and parses the file at `path` (--device-file).
  Status add_file(const std::string& path, const DeviceProfile** out);

  const DeviceProfile* find(const std::string& name) const;
  const std::vector<const DeviceProfile*>& all() const { return list_; }

 private:
  const char* keep(const std::string& s);  // a copy that lives as long as the catalog

  std::deque<std::string> strings_;
  std::deque<DeviceProfile> profiles_;
  std::vector<const DeviceProfile*> list_;
};

// "host|psp|psp-2000|esp32s3" (with a screen only: the ones console can draw on).
std::string device_choices(bool with_screen = false);

}  // namespace pocketlm::cli
