#include "device_catalog.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "cli_common.h"
#include "pocketlm/kernels/kernels.h"

namespace pocketlm::cli {

namespace {

using nlohmann::json;

// Field readers: each names the field's path ("tiers[1].capacity") in its error.
struct Reader {
  const std::string& label;

  Status error(const std::string& field, const std::string& what) const {
    return Status::error(StatusCode::kInvalidArgument, "%s: %s: %s", label.c_str(), field.c_str(), what.c_str());
  }
  Status object(const json& parent, const char* key, const std::string& path, const json** out) const {
    if (!parent.contains(key)) return error(path, "missing");
    if (!parent[key].is_object()) return error(path, "is not an object");
    *out = &parent[key];
    return Status();
  }
  Status text(const json& parent, const char* key, const std::string& path, std::string* out) const {
    if (!parent.contains(key)) return error(path, "missing");
    if (!parent[key].is_string()) return error(path, parent[key].dump() + " is not a string");
    *out = parent[key].get<std::string>();
    return Status();
  }
  Status flag(const json& parent, const char* key, const std::string& path, bool* out) const {
    if (!parent.contains(key)) return error(path, "missing");
    if (!parent[key].is_boolean()) return error(path, parent[key].dump() + " is not true or false");
    *out = parent[key].get<bool>();
    return Status();
  }
  // A finite number >= 0.
  Status rate(const json& parent, const char* key, const std::string& path, double* out) const {
    if (!parent.contains(key)) return error(path, "missing");
    const json& v = parent[key];
    if (!v.is_number()) return error(path, v.dump() + " is not a number");
    const double d = v.get<double>();
    if (!std::isfinite(d) || d < 0) return error(path, v.dump() + " is negative");
    *out = d;
    return Status();
  }
  // Bytes: a whole number >= 0, or null (0, unbounded) where `nullable`.
  Status bytes(const json& parent, const char* key, const std::string& path, bool nullable,
               std::uint64_t* out) const {
    const char* unit = nullable ? " (bytes, or null for unbounded)" : " (bytes)";
    if (!parent.contains(key)) return error(path, std::string("missing") + unit);
    const json& v = parent[key];
    if (v.is_null() && nullable) {
      *out = 0;
      return Status();
    }
    if (v.is_number_integer() && v.get<long long>() < 0) return error(path, v.dump() + " is negative" + unit);
    if (!v.is_number_unsigned()) return error(path, v.dump() + " is not a whole number" + unit);
    *out = v.get<std::uint64_t>();
    return Status();
  }
};

}  // namespace

const char* DeviceCatalog::keep(const std::string& s) { return strings_.emplace_back(s).c_str(); }

Status DeviceCatalog::add_json(const std::string& text, const std::string& label, const DeviceProfile** out) {
  const json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return Status::error(StatusCode::kBadFormat, "%s: not valid JSON", label.c_str());
  const Reader r{label};
  if (!doc.is_object()) return r.error("(top level)", "is not an object (one device profile)");
  DeviceProfile d{};
  std::string s;
  POCKETLM_TRY(r.text(doc, "name", "name", &s));
  if (s.empty()) return r.error("name", "is empty");
  d.name = keep(s);
  POCKETLM_TRY(r.text(doc, "description", "description", &s));
  d.description = keep(s);
  if (!doc.contains("kernels")) return r.error("kernels", "missing (a backend name, or null for this CPU's fastest)");
  if (!doc["kernels"].is_null()) {
    POCKETLM_TRY(r.text(doc, "kernels", "kernels", &s));
    bool known = false;
    for (const char* const* name = kernel_names(); *name; ++name) known = known || s == *name;
    if (!known) return r.error("kernels", "'" + s + "' is not a kernel backend of this build (see pocketlm --version)");
    // Compiled in but not runnable here: planning with it and running another would be silent.
    if (!find_kernels(s.c_str())) {
      std::string runs;
      for (const char* const* name = kernel_names(); *name; ++name)
        if (find_kernels(*name)) runs += std::string(runs.empty() ? "" : ", ") + *name;
      return r.error("kernels", "'" + s + "' needs instructions this CPU (" + cpu_model_name() +
                                    ") does not have; it runs " + runs);
    }
    d.kernels = keep(s);
  }
  if (!doc.contains("tiers") || !doc["tiers"].is_array()) return r.error("tiers", "missing (an array of memory tiers)");
  const json& tiers = doc["tiers"];
  if (tiers.empty() || tiers.size() > MemoryPlan::kMaxTiers)
    return r.error("tiers", "has " + std::to_string(tiers.size()) + " tiers; 1 to " +
                                std::to_string(MemoryPlan::kMaxTiers) + " (RAM tiers fastest first, then at most one "
                                "storage tier)");
  for (std::size_t i = 0; i < tiers.size(); ++i) {
    const std::string at = "tiers[" + std::to_string(i) + "]";
    const json& tj = tiers[i];
    if (!tj.is_object()) return r.error(at, "is not an object");
    DeviceTier& t = d.tiers[i];
    POCKETLM_TRY(r.text(tj, "name", at + ".name", &s));
    if (s.empty() || s.size() >= sizeof PlanTier{}.name)
      return r.error(at + ".name", "'" + s + "' must have 1 to " + std::to_string(sizeof PlanTier{}.name - 1) +
                                       " characters");
    for (std::size_t j = 0; j < i; ++j)
      if (s == d.tiers[j].name)  // the plan and its JSON name regions' tiers by name
        return r.error(at + ".name", "'" + s + "' is also tiers[" + std::to_string(j) + "]'s name");
    t.name = keep(s);
    POCKETLM_TRY(r.flag(tj, "storage", at + ".storage", &t.storage));
    if (i > 0 && d.tiers[i - 1].storage) return r.error(at, "follows the storage tier, which must be the last");
    if (i == 0 && t.storage) return r.error(at, "is storage; the first tier must be RAM (the arena's)");
    POCKETLM_TRY(r.bytes(tj, "capacity", at + ".capacity", true, &t.capacity));
    // 0 would be planned as unbounded (the plan's 0) and "fit": a tier without bytes is a mistake.
    if (t.capacity == 0 && !tj["capacity"].is_null())
      return r.error(at + ".capacity", "0 bytes; give the tier's size, or null for unbounded");
    POCKETLM_TRY(r.rate(tj, "read_bytes_per_s", at + ".read_bytes_per_s", &t.read_bytes_per_s));
    POCKETLM_TRY(r.text(tj, "source", at + ".source", &s));
    t.source = keep(s);
    if (t.storage) {
      POCKETLM_TRY(r.rate(tj, "read_latency_s", at + ".read_latency_s", &t.read_latency_s));
      POCKETLM_TRY(r.flag(tj, "reads_overlap_compute", at + ".reads_overlap_compute", &t.reads_overlap_compute));
      POCKETLM_TRY(r.bytes(tj, "reserved_bytes", at + ".reserved_bytes", false, &t.reserved_bytes));
      if (t.capacity && t.reserved_bytes > t.capacity)
        return r.error(at + ".reserved_bytes", std::to_string(t.reserved_bytes) + " exceeds the capacity " +
                                                   std::to_string(t.capacity));
      POCKETLM_TRY(r.text(tj, "reserved_source", at + ".reserved_source", &s));
      t.reserved_source = keep(s);
    }
  }
  d.tier_count = static_cast<int>(tiers.size());
  const json* compute = nullptr;
  POCKETLM_TRY(r.object(doc, "compute", "compute", &compute));
  POCKETLM_TRY(r.rate(*compute, "macs_per_s", "compute.macs_per_s", &d.macs_per_s));
  POCKETLM_TRY(r.text(*compute, "source", "compute.source", &s));
  d.compute_source = keep(s);
  if (!doc.contains("screen")) return r.error("screen", "missing (an object, or null for none)");
  if (!doc["screen"].is_null()) {
    const json* screen = nullptr;
    POCKETLM_TRY(r.object(doc, "screen", "screen", &screen));
    std::uint64_t w = 0, h = 0;
    POCKETLM_TRY(r.bytes(*screen, "width", "screen.width", false, &w));
    POCKETLM_TRY(r.bytes(*screen, "height", "screen.height", false, &h));
    // The console draws 8x8 cells into a 32-bit framebuffer: at least one cell, at most 4K.
    if (w < 8 || w > 4096) return r.error("screen.width", std::to_string(w) + " pixels is outside [8, 4096]");
    if (h < 8 || h > 4096) return r.error("screen.height", std::to_string(h) + " pixels is outside [8, 4096]");
    d.screen_width = static_cast<int>(w);
    d.screen_height = static_cast<int>(h);
    POCKETLM_TRY(r.text(*screen, "source", "screen.source", &s));
    d.screen_source = keep(s);
  }
  for (const DeviceProfile* p : list_)
    if (std::string(p->name) == d.name)
      return r.error("name", "'" + std::string(d.name) + "' is already a device profile");
  profiles_.push_back(d);
  list_.push_back(&profiles_.back());
  *out = &profiles_.back();
  return Status();
}

Status DeviceCatalog::add_file(const std::string& path, const DeviceProfile** out) {
  // Not std::ifstream: reading a directory through it throws (an abort), and a FIFO blocks.
  std::string text;
  POCKETLM_TRY(read_whole_file(path, "--device-file", &text));
  return add_json(text, path, out);
}

DeviceCatalog& DeviceCatalog::builtin() {
  static DeviceCatalog* catalog = [] {
    auto* c = new DeviceCatalog;
    for (const BuiltinDevice* b = kBuiltinDevices; b->file; ++b) {
      const DeviceProfile* unused = nullptr;
      const Status st = c->add_json(b->json, b->file, &unused);
      if (!st.ok()) {
        std::fprintf(stderr, "pocketlm: built-in device profile: %s\n", st.message());
        std::abort();
      }
    }
    return c;
  }();
  return *catalog;
}

const DeviceProfile* DeviceCatalog::find(const std::string& name) const {
  for (const DeviceProfile* p : list_)
    if (name == p->name) return p;
  return nullptr;
}

std::string device_choices(bool with_screen) {
  std::string choices;
  for (const DeviceProfile* d : DeviceCatalog::builtin().all())
    if (!with_screen || d->screen_width > 0) choices += std::string(choices.empty() ? "" : "|") + d->name;
  return choices;
}

}  // namespace pocketlm::cli
