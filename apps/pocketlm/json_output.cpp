#include "json_output.h"

#include <CLI/CLI.hpp>
#include <cstdio>

namespace pocketlm::cli {

void add_json_flag(CLI::App* cmd, bool* on) {
  cmd->add_flag("--json", *on, "print the figures as one JSON object on stdout (keys: docs/json.md)");
}

nlohmann::json plan_json(const MemoryPlan& plan) {
  nlohmann::json tiers = nlohmann::json::array();
  for (int t = 0; t < plan.tier_count(); ++t) {
    const PlanTier& tier = plan.tier(t);
    nlohmann::json regions = nlohmann::json::array();
    for (int i = 0; i < plan.size(); ++i) {
      const PlanRegion& r = plan.region(i);
      if (r.tier != t) continue;
      regions.push_back({{"name", r.name}, {"bytes", r.bytes}, {"note", r.note}, {"reserved", r.reserved}});
    }
    tiers.push_back({{"name", tier.name},
                     {"storage", tier.storage},
                     {"capacity", tier.capacity ? nlohmann::json(tier.capacity) : nlohmann::json(nullptr)},
                     {"reserved", tier.reserved},
                     {"total", plan.tier_total(t)},
                     {"regions", regions}});
  }
  return {{"fits", plan.fits()},
          {"arena_bytes", plan.total()},
          {"storage_bytes_per_token", plan.storage_bytes_per_token()},
          {"model_file_bytes", plan.storage_file_bytes()},
          {"tokenizer_file_bytes", plan.storage_tokenizer_bytes()},
          {"tiers", tiers}};
}

nlohmann::json config_json(const ModelConfig& c) {
  return {{"dim", c.dim},           {"hidden_dim", c.hidden_dim}, {"n_layers", c.n_layers},
          {"n_heads", c.n_heads},   {"n_kv_heads", c.n_kv_heads}, {"vocab_size", c.vocab_size},
          {"seq_len", c.seq_len}};
}

nlohmann::json device_json(const DeviceProfile& d) {
  nlohmann::json tiers = nlohmann::json::array();
  for (int i = 0; i < d.tier_count; ++i) {
    const DeviceTier& t = d.tiers[i];
    nlohmann::json tier = {{"name", t.name},
                           {"storage", t.storage},
                           {"capacity", t.capacity ? nlohmann::json(t.capacity) : nlohmann::json(nullptr)},
                           {"read_bytes_per_s", t.read_bytes_per_s},
                           {"source", t.source}};
    if (t.storage) {
      tier["read_latency_s"] = t.read_latency_s;
      tier["reads_overlap_compute"] = t.reads_overlap_compute;
      tier["reserved_bytes"] = t.reserved_bytes;
      tier["reserved_source"] = t.reserved_source ? t.reserved_source : "";
    }
    tiers.push_back(tier);
  }
  nlohmann::json screen = nullptr;
  if (d.screen_width > 0)
    screen = {{"width", d.screen_width}, {"height", d.screen_height}, {"source", d.screen_source}};
  return {{"name", d.name},
          {"description", d.description},
          {"kernels", d.kernels ? nlohmann::json(d.kernels) : nlohmann::json(nullptr)},
          {"tiers", tiers},
          {"compute", {{"macs_per_s", d.macs_per_s}, {"source", d.compute_source}}},
          {"screen", screen}};
}

void print_json(const nlohmann::json& j) { std::printf("%s\n", j.dump(2).c_str()); }

}  // namespace pocketlm::cli
