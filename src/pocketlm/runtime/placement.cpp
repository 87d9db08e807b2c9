#include "pocketlm/runtime/placement.h"

#include <cstring>

#include "pocketlm/format/tensor_role.h"

namespace pocketlm {

int placement_families(const ModelSpec& spec, std::size_t block_bytes, WeightPlacement out[kMaxPlacementFamilies]) {
  int n = 0;
  for (int table = 0; table < 2; ++table) {
    for (int cls = 0; cls < 2; ++cls) {
      // A shared classifier is the table: both in storage or neither.
      if (spec.shared_classifier ? cls != table : (cls && !spec.has(TensorRole::kWcls))) continue;
      WeightPlacement p;
      p.table_in_storage = table != 0;
      p.classifier_in_storage = !spec.shared_classifier && cls != 0;
      p.block_bytes = block_bytes;
      out[n++] = p;
    }
  }
  return n;
}

void assign_ram_tiers(MemoryPlan* plan) {
  int ram_tiers = 0;
  for (int t = 0; t < plan->tier_count(); ++t) ram_tiers += plan->tier(t).storage ? 0 : 1;
  if (ram_tiers < 2) return;
  // Hottest first: touched every token, many times per byte.
  static const char* const kOrder[] = {"activations", "layer table", "norms", "rope table", "logits",
                                       "stream buffers", "sampler scratch", "io chunk", "repack scratch",
                                       "alignment padding", "kv cache", "tokenizer tables", "attention weights",
                                       "ffn weights", "classifier", "embedding"};
  std::uint64_t used[MemoryPlan::kMaxTiers] = {};
  for (const char* name : kOrder) {
    int index = -1;
    for (int i = 0; i < plan->size(); ++i)
      if (std::strcmp(plan->region(i).name, name) == 0 && !plan->tier(plan->region(i).tier).storage) index = i;
    if (index < 0) continue;
    const std::uint64_t bytes = plan->region(index).bytes;
    int last_ram = 0, chosen = -1;
    for (int t = 0; t < plan->tier_count(); ++t) {
      if (plan->tier(t).storage) continue;
      last_ram = t;
      const std::uint64_t cap = plan->tier(t).capacity;
      if (chosen < 0 && (cap == 0 || used[t] + bytes <= cap)) chosen = t;
    }
    if (chosen < 0) chosen = last_ram;
    used[chosen] += bytes;
    plan->set_region_tier(name, chosen);
  }
}

}  // namespace pocketlm
