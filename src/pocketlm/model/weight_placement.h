// WeightPlacement: where each weight tensor lives for one session, chosen by the planner
// (runtime/placement.h) when the RAM tiers cannot hold them all. Each tensor is
// - resident: loaded into the arena once;
// - row-fetched: a row-gather table (its role's use, format/tensor_role.h) left in storage,
//   one row read per token (model/placed_weights.h: row());
// - streamed: a matrix left in storage, read whole every token in forward-pass order through
//   bounded buffers (model/weight_stream.h).
// The token-embedding table that is also the classifier (llama2.c's shared classifier) is
// both: one row per token and the whole table as the classifier. Norm vectors always stay in
// RAM. The placement is per tensor (per role and layer), so any subset can stay in storage.
#pragma once

#include <cstddef>
#include <cstdint>

#include "pocketlm/format/model_spec.h"
#include "pocketlm/format/tensor_role.h"

namespace pocketlm {

enum class Residency : std::uint8_t { kResident, kRowFetched, kStreamed };

class WeightPlacement {
 public:
  std::size_t block_bytes = 256 * 1024;  // target size of one streaming buffer

  // Whether any tensor stays in storage.
  bool any() const { return stored_count_ > 0; }
  int stored_count() const { return stored_count_; }
  // Whether tensor `t` stays in storage (false for roles that can only be resident: norms).
  bool in_storage(const TensorInfo& t) const;
  // How tensor `t` is read: its use decides between row-fetched and streamed.
  Residency residency(const TensorInfo& t) const;
  // Leaves `t` in storage. A norm, an unused role or a layer past kMaxLayers is refused (false).
  bool keep_in_storage(const TensorInfo& t);

 private:
  static constexpr int kWords = kMaxLayers / 64;
  // Where `t`'s flag lives: its word and bit, or a null word for a tensor that cannot be stored.
  struct Flag {
    std::uint64_t* word = nullptr;
    std::uint64_t bit = 0;
  };
  Flag flag(const TensorInfo& t) const;
  // Bit l of layers_[r]: layer l of layer role slot r is stored; bit g of globals_: global slot g.
  std::uint64_t layers_[kLayerRoleCount][kWords] = {};
  std::uint64_t globals_ = 0;
  static_assert(kGlobalRoleCount <= 64, "one word of global flags");
  int stored_count_ = 0;
};

// Whether `t` may be left in storage at all: a matrix or a row-gather table of a role some kind
// reads (norms are tiny and read by every token: always resident).
bool storable(const TensorInfo& t);

// Bytes one token reads from storage when `t` stays there: one row of a row-gather table (and
// the whole table when it is also the shared classifier), a streamed matrix whole.
std::uint64_t stored_bytes_per_token(const ModelSpec& spec, const TensorInfo& t);

// Bytes of weights that stay in storage, and of those one token reads.
struct StorageCost {
  std::uint64_t stored_bytes = 0;
  std::uint64_t bytes_per_token = 0;
};
StorageCost storage_cost(const ModelSpec& spec, const WeightPlacement& placement);

}  // namespace pocketlm
