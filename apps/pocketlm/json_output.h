// `--json` for plan, devices, bench and eval: the figures of their tables as one JSON object
// on stdout, with the keys documented in docs/json.md (scripts and CI check a model against a
// board with them). Numbers are plain numbers: bytes as integers, rates as floats.
#pragma once

#include <nlohmann/json.hpp>

#include "pocketlm/format/model_spec.h"
#include "pocketlm/memory/memory_plan.h"
#include "pocketlm/runtime/device_profile.h"

namespace CLI {
class App;
}

namespace pocketlm::cli {

// Adds --json to `cmd`, bound to `on`.
void add_json_flag(CLI::App* cmd, bool* on);

// {"fits", "arena_bytes", "storage_bytes_per_token", "model_file_bytes", "tiers": [{"name",
// "storage", "capacity" (null: unbounded), "reserved", "total", "regions": [{"name", "bytes",
// "note"}]}]}.
nlohmann::json plan_json(const MemoryPlan& plan);
// {"dim", "hidden_dim", "n_layers", "n_heads", "n_kv_heads", "vocab_size", "seq_len"}.
nlohmann::json config_json(const ModelConfig& config);
// A device profile: {"name", "description", "kernels", "tiers": [...], "compute": {...},
// "screen": {...} or null}.
nlohmann::json device_json(const DeviceProfile& device);
// Writes `j` to stdout, indented, with a final newline.
void print_json(const nlohmann::json& j);

}  // namespace pocketlm::cli
