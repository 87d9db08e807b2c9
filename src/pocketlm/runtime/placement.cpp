#include "pocketlm/runtime/placement.h"

#include "pocketlm/format/architecture.h"
#include "pocketlm/format/tensor_role.h"
#include "pocketlm/model/weight_stream.h"

namespace pocketlm {

namespace {

// What leaving one tensor in storage frees and costs.
struct Candidate {
  TensorInfo t;
  bool row_gather = false;      // one row per token: nearly free to leave in storage
  std::uint64_t freed = 0;      // bytes of RAM
  std::uint64_t per_token = 0;  // bytes read from storage per token
  std::uint64_t block = 0;      // bytes of one streamed block (0: row-fetched, no stream buffer)
  std::uint64_t scratch = 0;    // streamed, the bytes of its repack scratch (0: not repacked)
  int order = -1;               // its role's place in the kind's forward order
};

Candidate candidate(const ModelSpec& spec, const Kernels& kernels, std::size_t block_bytes, const TensorInfo& t) {
  // A table that is also the classifier is read whole every token, like a matrix.
  const bool row_gather = t.schema->use == TensorUse::kRowGather &&
                          !(t.role == TensorRole::kTokenEmbedding && spec.shared_classifier);
  Candidate c{t, row_gather, t.bytes(), stored_bytes_per_token(spec, t)};
  c.order = spec.schema() ? forward_index(*spec.schema(), t.role) : -1;
  if (!row_gather) {
    const StreamBlock b = stream_block(t, block_bytes, kernels);
    c.block = b.bytes;
    c.scratch = b.scratch;
  }
  return c;
}

// Later in the forward pass: a later layer, then a later role (globals by their order).
bool later(const Candidate& a, const Candidate& b) {
  if (a.t.layer != b.t.layer) return a.t.layer > b.t.layer;
  return a.order > b.order;
}

// The shedding order: row-gather tables, then the rest; the largest first; later first.
bool sheds_first(const Candidate& a, const Candidate& b) {
  if (a.row_gather != b.row_gather) return a.row_gather;
  if (a.freed != b.freed) return a.freed > b.freed;
  return later(a, b);
}

// Whether a covers the shortfall more cheaply than b.
bool cheaper(const Candidate& a, const Candidate& b) {
  if (a.per_token != b.per_token) return a.per_token < b.per_token;
  return later(a, b);
}

struct Shedding {
  const ModelSpec& spec;
  const Kernels& kernels;
  std::size_t block_bytes;

  // Calls f(Candidate) for each tensor that could still be left in storage.
  template <typename F>
  void each(const WeightPlacement& p, F f) const {
    for (int i = 0; i < spec.tensor_count(); ++i) {
      const TensorInfo t = spec.tensor(i);
      if (*t.schema->region == '\0' || !storable(t) || p.in_storage(t)) continue;
      f(candidate(spec, kernels, block_bytes, t));
    }
  }

  // Frees `need` bytes beyond placement `p` with tensors whose stream block is at most `level`;
  // returns what is still short (0: covered) and adds the bytes they read per token to *cost;
  // with `apply`, leaves them in storage there (`apply` may be `p`). One pass in shedding order:
  // every row-gather table until nothing is short; a matrix only when it frees no more than is
  // short (a larger one would read bytes per token for nothing); then, of the matrices passed
  // over (each frees more than is left), the cheapest. No copy of the placement: what the pass
  // takes lies behind its cursor.
  std::uint64_t greedy(const WeightPlacement& p, std::uint64_t need, std::uint64_t level, std::uint64_t* cost,
                       WeightPlacement* apply) const {
    auto take = [&](const Candidate& c) {
      if (apply) apply->keep_in_storage(c.t);
      *cost += c.per_token;
      need = c.freed >= need ? 0 : need - c.freed;
    };
    Candidate prev, cover;
    bool started = false, have_cover = false;
    while (need > 0) {
      Candidate next;
      bool found = false;
      each(p, [&](const Candidate& c) {
        if (c.block > level) return;
        if ((!started || sheds_first(prev, c)) && (!found || sheds_first(c, next))) next = c, found = true;
      });
      if (!found) break;
      prev = next;
      started = true;
      if (next.row_gather || next.freed <= need)
        take(next);
      else if (!have_cover || cheaper(next, cover))
        cover = next, have_cover = true;
    }
    if (need > 0 && have_cover) take(cover);
    return need;
  }
};

// The stream buffers' bytes a level of block size adds to those of `current` (the largest block
// already streamed): two read buffers of a block, and the first time anything streams the
// largest repack scratch any candidate could need (one interleaved block of rows: a few KiB).
struct StreamBuffers {
  std::uint64_t scratch = 0;
  std::uint64_t added(std::uint64_t current, std::uint64_t level) const {
    return 2 * (level - current) + (current == 0 && level > 0 ? scratch : 0);
  }
};

// The block-size level at which streaming every tensor that fits it frees the most RAM net of
// the stream buffers it adds (levels from `current`, the largest block already streamed).
std::uint64_t least_ram_level(const Shedding& shed, const WeightPlacement& placement, std::uint64_t current,
                              const StreamBuffers& buffers) {
  // A level frees `freed` and costs `buffers` bytes: compared as freed + other.buffers, so no
  // negative values (both sums are bounded by the model file's size, far below 2^63).
  std::uint64_t best_level = current, best_freed = 0, best_buffers = 0, level = current;
  for (;;) {
    const std::uint64_t level_buffers = buffers.added(current, level);
    std::uint64_t freed = 0, next = UINT64_MAX;
    shed.each(placement, [&](const Candidate& c) {
      if (c.block <= level) freed += c.freed;
      else if (c.block < next) next = c.block;
    });
    if (freed + best_buffers > best_freed + level_buffers)
      best_level = level, best_freed = freed, best_buffers = level_buffers;
    if (next == UINT64_MAX) break;
    level = next;
  }
  return best_level;
}

}  // namespace

bool shed_weights(const ModelSpec& spec, const Kernels& kernels, std::uint64_t shortfall, WeightPlacement* placement) {
  const Shedding shed{spec, kernels, placement->block_bytes};
  // The stream buffers already in the plan: sized by the largest block streamed so far.
  std::uint64_t current = 0;
  StreamBuffers buffers;
  for (int i = 0; i < spec.tensor_count(); ++i) {
    const TensorInfo t = spec.tensor(i);
    if (storable(t)) {
      const Candidate c = candidate(spec, kernels, placement->block_bytes, t);
      if (c.scratch > buffers.scratch) buffers.scratch = c.scratch;
      if (placement->in_storage(t) && c.block > current) current = c.block;
    }
  }
  // Each block size a placement could need is a level: streaming only tensors whose blocks
  // fit it costs the buffers of that level. Shed at the level that reads the fewest bytes per
  // token; when none frees enough, take the placement that needs the least RAM.
  auto need_at = [&](std::uint64_t level) {  // the shortfall and the buffers a level adds
    const std::uint64_t extra = buffers.added(current, level);
    return shortfall > UINT64_MAX - extra ? UINT64_MAX : shortfall + extra;
  };
  bool covered = false;
  std::uint64_t best_cost = 0, best_level = 0, level = current;
  for (;;) {
    std::uint64_t cost = 0;
    if (shed.greedy(*placement, need_at(level), level, &cost, nullptr) == 0 &&
        (!covered || cost < best_cost))
      best_cost = cost, best_level = level, covered = true;
    std::uint64_t next = UINT64_MAX;  // the next larger block size
    shed.each(*placement, [&](const Candidate& c) {
      if (c.block > level && c.block < next) next = c.block;
    });
    if (next == UINT64_MAX) break;
    level = next;
  }
  const int before = placement->stored_count();
  std::uint64_t cost = 0;
  if (covered) {
    shed.greedy(*placement, need_at(best_level), best_level, &cost, placement);
  } else {
    // Nothing frees enough: the placement that needs the least RAM, so that the plan's
    // shortfall is the least memory this model can run in (a budget of exactly that fits).
    // At a level, streaming every tensor whose block fits it frees their bytes less the
    // buffers the level adds; the level freeing the most wins (the lower one on a tie).
    const std::uint64_t least = least_ram_level(shed, *placement, current, buffers);
    shed.each(*placement, [&](const Candidate& c) {
      if (c.block <= least) placement->keep_in_storage(c.t);
    });
  }
  return placement->stored_count() > before;
}

void assign_ram_tiers(MemoryPlan* plan) {
  int ram_tiers = 0;
  for (int t = 0; t < plan->tier_count(); ++t) ram_tiers += plan->tier(t).storage ? 0 : 1;
  if (ram_tiers < 2) return;
  // Hottest first (Heat); within one heat the smallest first, so that the fast tier holds as
  // many of the buffers a token touches as it can. Each goes to the fastest RAM tier with room,
  // else to the last (whose overflow the plan then reports).
  bool placed[MemoryPlan::kMaxRegions] = {};
  std::uint64_t used[MemoryPlan::kMaxTiers] = {};
  for (int i = 0; i < plan->size(); ++i)  // what is reserved stays where it is counted
    if (plan->region(i).reserved) used[plan->region(i).tier] += plan->region(i).bytes;
  for (;;) {
    int next = -1;
    for (int i = 0; i < plan->size(); ++i) {
      const PlanRegion& r = plan->region(i);
      if (placed[i] || r.reserved || plan->tier(r.tier).storage) continue;
      const PlanRegion* best = next < 0 ? nullptr : &plan->region(next);
      if (!best || r.heat > best->heat || (r.heat == best->heat && r.bytes < best->bytes)) next = i;
    }
    if (next < 0) return;
    placed[next] = true;
    const PlanRegion& r = plan->region(next);
    int last_ram = 0, chosen = -1;
    for (int t = 0; t < plan->tier_count(); ++t) {
      if (plan->tier(t).storage) continue;
      last_ram = t;
      const std::uint64_t cap = plan->tier(t).capacity;
      if (chosen < 0 && (cap == 0 || (used[t] <= cap && r.bytes <= cap - used[t]))) chosen = t;
    }
    if (chosen < 0) chosen = last_ram;
    used[chosen] += r.bytes;
    plan->set_region_tier(r.name, chosen);
  }
}

}  // namespace pocketlm
