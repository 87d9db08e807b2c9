// Model: one kind of decoder (llama, or another of model/model_kind.cpp) behind the interface a
// Session drives. A kind carves its weights and run state from the arena (the same code
// measures the plan on a measuring arena), loads its weights, and runs one token at a time.
// Kinds are registered in model/model_kind.cpp and chosen by ModelSpec::architecture.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "pocketlm/base/parallel.h"
#include "pocketlm/format/model_spec.h"
#include "pocketlm/io/read_queue.h"
#include "pocketlm/io/storage.h"
#include "pocketlm/kernels/kernels.h"
#include "pocketlm/memory/arena.h"
#include "pocketlm/model/blocks.h"
#include "pocketlm/model/weight_placement.h"

namespace pocketlm {

class Model {
 public:
  virtual ~Model() = default;
  // Carves the resident weights (in the layout `kernels` reads) and the buffers of those
  // `placement` keeps in storage, the KV cache (for `seq_len` <= the model's) and the
  // activations from `arena`; with a measuring arena only the sizes are recorded. `spec`
  // must outlive the model (a Session owns it).
  virtual Status carve(const ModelSpec& spec, int seq_len, const Kernels& kernels, const WeightPlacement& placement,
                       KvType kv, Arena& arena) = 0;
  // Reads every resident weight from `storage`, at most `chunk_bytes` per read; weights in
  // storage are read per token through `queue` (null: inline), so `storage` must then outlive
  // the model.
  virtual Status load(Storage& storage, std::size_t chunk_bytes, ReadQueue* queue) = 0;
  // The first error of a read during forward() (the pass then computed on zeros).
  virtual Status status() const = 0;
  // Waits for a read still in flight.
  virtual void settle() = 0;
  // Forgets the read error of an earlier call (status() ok again): a failed read ends the call
  // that met it, and the next call reads again.
  virtual void clear_status() = 0;
  // A flag another thread may set to stop a pass between weight blocks read from storage
  // (status() then says kAborted); nullptr: none.
  virtual void set_abort(const std::atomic<int>* flag) = 0;
  // Splits matmul rows and attention heads over `parallel` (nullptr: the calling thread).
  virtual void set_parallel(Parallel* parallel) = 0;
  // Runs one token at position pos (0 <= pos < seq_len, both checked by the caller) and
  // returns the logits [vocab_size], valid until the next call.
  virtual float* forward(int token, int pos) = 0;

  // Batched prefill. Carves the activations of blocks of `batch` prompt tokens (after carve();
  // batch <= 1: none, prefill_batch() is then 1). Errors: arena exhausted.
  virtual Status carve_prefill(int batch, Arena& arena) = 0;
  // Tokens per forward_batch() call at most (1: no batched path).
  virtual int prefill_batch() const = 0;
  // Runs tokens[0..count) at positions pos..pos+count-1 (2 <= count <= prefill_batch(),
  // pos + count <= seq_len, checked by the caller) as one pass over the weights: fills their
  // keys and values exactly as `count` forward() calls would, and computes no logits.
  virtual void forward_batch(const std::int32_t* tokens, int count, int pos) = 0;

  virtual const ModelSpec& spec() const = 0;
  virtual int seq_len() const = 0;
  // Bytes of weights one forward pass reads (see WeightSource::bytes_per_token).
  virtual std::uint64_t weight_bytes_per_token() const = 0;
};

}  // namespace pocketlm
