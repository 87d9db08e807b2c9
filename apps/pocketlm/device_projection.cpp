#include "device_projection.h"

#include "cli_common.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "pocketlm/format/tensor_role.h"
#include "pocketlm/model/blocks.h"

namespace pocketlm::cli {

double macs_per_token(const ModelSpec& spec) {
  double macs = 0;
  for (int i = 0; i < spec.tensor_count(); ++i) {
    const TensorInfo t = spec.tensor(i);
    if (t.schema->use == TensorUse::kMatmul) macs += double(t.numel());  // a row-gather table: no arithmetic
  }
  if (spec.shared_classifier) macs += double(spec.tensor(TensorRole::kTokenEmbedding, -1).numel());
  return macs;
}

namespace {

// Bytes of region `r` that one decode token at `mean_position` reads. Buffers the token writes
// and reads in small pieces (activations, logits, scratch) are left out: they are a few KiB and
// live in the fastest tier.
double region_reads(const PlanRegion& r, const ModelSpec& spec, int seq_len, double mean_position) {
  const double bytes = static_cast<double>(r.bytes);
  if (std::strcmp(r.name, region::kKvCache) == 0) return bytes * std::min(1.0, (mean_position + 1) / seq_len);
  // A weight region: a row-gather table gives one row per token, the rest is read whole.
  for (const RoleInfo& role : kRoleTable) {
    if (!*role.region || std::strcmp(r.name, role.region) != 0) continue;
    if (role.use == TensorUse::kRowGather) return bytes / static_cast<double>(extent(spec.config, role.rows));
    return bytes;
  }
  return 0;
}

}  // namespace

DeviceProjection project_decode(const DeviceProfile& device, const MemoryPlan& plan, const ModelSpec& spec,
                                int seq_len, double storage_bytes, double storage_seeks, double mean_position) {
  DeviceProjection p;
  p.macs = macs_per_token(spec);
  if (device.macs_per_s <= 0) return p;
  p.known = true;
  p.compute_s = p.macs / device.macs_per_s;
  p.tier_count = std::min(plan.tier_count(), device.tier_count);
  double ram_s = 0, storage_s = 0;
  for (int t = 0; t < p.tier_count; ++t) {
    const DeviceTier& dt = device.tiers[t];
    TierRead& read = p.tiers[t];
    read.tier = dt.name;
    read.bytes_per_s = dt.read_bytes_per_s;
    if (dt.storage) {
      read.bytes = storage_bytes;
      p.storage_seeks = storage_seeks;
    } else {
      for (int i = 0; i < plan.size(); ++i)
        if (plan.region(i).tier == t) read.bytes += region_reads(plan.region(i), spec, seq_len, mean_position);
    }
    read.seconds = read.bytes_per_s > 0 ? read.bytes / read.bytes_per_s : 0;
    if (dt.storage) {
      read.seconds += storage_seeks * dt.read_latency_s;
      storage_s += read.seconds;
      p.overlap = dt.reads_overlap_compute;
    } else {
      ram_s += read.seconds;  // the CPU waits on its own loads: no overlap with compute
    }
  }
  const double cpu_s = p.compute_s + ram_s;
  p.token_s = p.overlap ? std::max(cpu_s, storage_s) : cpu_s + storage_s;
  p.tok_per_s = p.token_s > 0 ? 1.0 / p.token_s : 0;
  return p;
}

std::string projection_text(const DeviceProfile& device, const DeviceProjection& p) {
  if (!p.known) return std::string(device.name) + ": no compute rate in the profile (" + device.compute_source + ")";
  std::string text = fmt("%.3g on ", p.tok_per_s) + device.name + " (an estimate per decode token: compute " +
                     fmt("%.2f M multiply-adds at %.0f M/s = %.4f s", p.macs / 1e6, device.macs_per_s / 1e6,
                         p.compute_s);
  for (int t = 0; t < p.tier_count; ++t) {
    const TierRead& r = p.tiers[t];
    text += std::string("; ") + r.tier + fmt(" %.1f KB", r.bytes / 1e3);
    if (r.bytes_per_s > 0)
      text += fmt(" at %.1f MB/s", r.bytes_per_s / 1e6) +
              (device.tiers[t].storage && p.storage_seeks > 0
                   ? fmt(" + %.0f seeks x %.3f ms", p.storage_seeks, device.tiers[t].read_latency_s * 1e3)
                   : std::string()) +
              fmt(" = %.4f s", r.seconds);
    else
      text += " (no bandwidth in the profile: not counted)";
  }
  return text + (p.overlap ? "; storage overlapped with compute)" : "; all one after the other)");
}

}  // namespace pocketlm::cli
