// Session: one model, its tokenizer and a sampler living in one arena, and the generation
// loop of llama2.c's run.c. Building a session plans every byte first (MemoryPlan), refuses
// to go over the budget before any weight byte is read, then makes one allocation (or uses
// the caller's buffer) and reads the files into it. generate() allocates nothing.
#pragma once

#include <cstddef>
#include <cstdint>

#include "pocketlm/base/parallel.h"
#include "pocketlm/format/model_spec.h"
#include "pocketlm/io/counting_storage.h"
#include "pocketlm/io/read_queue.h"
#include "pocketlm/io/storage.h"
#include "pocketlm/kernels/kernels.h"
#include "pocketlm/memory/arena.h"
#include "pocketlm/memory/memory_plan.h"
#include "pocketlm/model/model.h"
#include "pocketlm/model/model_kind.h"
#include "pocketlm/model/weight_placement.h"
#include "pocketlm/runtime/device_profile.h"
#include "pocketlm/sampling/sampler.h"
#include "pocketlm/text/tokenizer.h"

namespace pocketlm {

inline constexpr const char* kIoChunkRegion = "io chunk";
// Most prompt tokens one batched prefill pass runs (SessionOptions::prefill_batch): each weight
// byte then serves up to this many tokens; the activations of 64 tokens of a stories15M-shaped
// model are about 0.7 MiB.
inline constexpr int kMaxPrefillBatch = 64;

// What the platform lends a session (ports/: posix, a PSP or ESP32 port). The engine itself
// has no threads, files or clocks.
struct SessionOptions {
  int seq_len = 0;                         // context (tokens); 0 = the model's seq_len
  const Kernels* kernels = nullptr;        // nullptr = default_kernels()
  Parallel* parallel = nullptr;            // workers for matmul rows and attention heads (not
                                           // owned; nullptr = the calling thread)
  double (*clock)() = nullptr;             // monotonic seconds for GenerateStats; nullptr = no timing
  const DeviceProfile* device = nullptr;   // memory tiers (runtime/device_profile.h); nullptr =
                                           // one RAM tier of budget_bytes and the model file
  ReadQueue* read_queue = nullptr;         // how weights kept in storage are read per token
                                           // (not owned; nullptr = inline reads)
  std::size_t stream_block_bytes = 256 * 1024;  // one streaming buffer
  KvType kv = KvType::kF32;                // f16 halves the KV cache; f32 is run.c's (exact)
  std::size_t io_chunk_bytes = 64 * 1024;  // largest single read from storage
  std::uint64_t budget_bytes = 0;          // first RAM tier's capacity (--heap); 0 = the device's
  std::uint64_t reserve_bytes = 0;         // of the first RAM tier, not for the arena (the
                                           // program itself when the budget bounds the process)
  void* arena_buffer = nullptr;            // firmware: use this instead of allocating
  int prefill_batch = 0;                   // prompt tokens per prefill pass: 0 = the plan's
                                           // choice (kMaxPrefillBatch, or the most that fits
                                           // the RAM tiers), 1 = one token at a time as run.c
  std::size_t arena_buffer_bytes = 0;
};

// Counts and timings of one generate() call. A forward pass is "prefill" when its next
// token is forced by the prompt and "decode" when its next token is sampled.
struct GenerateStats {
  int prompt_tokens = 0;      // tokens of the encoded prompt, BOS included
  int prefill_passes = 0;
  int decode_passes = 0;      // = tokens sampled, a final BOS included
  double prefill_seconds = 0.0;
  double decode_seconds = 0.0;
  double first_token_seconds = 0.0;  // from the start to the first sampled token
  // Reads and bytes taken from the model storage by the forward passes (weights kept in
  // storage; 0 when every weight is resident).
  std::uint64_t storage_reads = 0;
  std::uint64_t storage_seeks = 0;  // reads not contiguous with the one before
  std::uint64_t storage_bytes = 0;
  std::uint64_t prefill_storage_bytes = 0;  // the part of storage_bytes the prefill passes read
  // run.c's "achieved tok/s": (passes - 1) / seconds since the end of the first pass.
  double achieved_tok_per_s = 0.0;

  double prefill_tok_per_s() const { return prefill_seconds > 0 ? prefill_passes / prefill_seconds : 0.0; }
  double decode_tok_per_s() const { return decode_seconds > 0 ? decode_passes / decode_seconds : 0.0; }
};

// Called once per chosen next token (forced or sampled) with the token before it; a final
// BOS that ends the run is reported too. Return false to stop early.
using TokenCallback = bool (*)(std::int32_t prev, std::int32_t next, void* ctx);

class Session {
 public:
  Session() = default;
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Computes the plan for `model` (header only) and `tokenizer` (size only; null: the model's
  // own tokenizer when it carries one, else none) under `options`, without allocating: when the weights do not all fit the RAM tiers, it
  // keeps in storage what costs the fewest bytes read per token (runtime/placement.h) and
  // returns that placement in *placement (when not null). A plan that does not fit even so
  // is returned too (plan->fits() is false). Errors: bad header, seq_len out of range.
  // The prompt tokens per prefill pass go to *prefill_batch (when not null): the largest
  // power of two up to kMaxPrefillBatch (and seq_len) whose activations still fit once the
  // weights are placed, or options.prefill_batch when set.
  static Status plan(Storage& model, Storage* tokenizer, const SessionOptions& options, ModelSpec* spec,
                     MemoryPlan* plan, WeightPlacement* placement = nullptr, int* prefill_batch = nullptr);

  // Plans, checks the budget (kOutOfMemory with the plan left in plan() when over), then
  // allocates the arena (or checks that the borrowed buffer holds the plan) and loads model and
  // tokenizer. A session opens once: a second call is an error (kInvalidArgument), and after a
  // failed open generate() refuses to run.
  Status open(Storage& model, Storage& tokenizer, const SessionOptions& options);
  // The same; a null `tokenizer` takes the one the model file carries (GGUF), an error when it
  // carries none pocketlm reads.
  Status open(Storage& model, Storage* tokenizer, const SessionOptions& options);

  // Encodes a prompt with BOS (run.c: encode(prompt, bos=1, eos=0)). tokens must hold
  // strlen(text) + 3 entries. Error when the prompt is longer than the context.
  Status encode(const char* text, std::size_t len, std::int32_t* tokens, std::size_t capacity, int* n) const;

  // run.c's generation loop: feeds prompt[0] at pos 0; while pos < steps the next token is
  // the next prompt token while the prompt lasts, else a sample; BOS as next ends the run.
  // Prompt tokens whose next token is forced run in blocks of up to prefill_batch() tokens
  // (one read of the weights per block, no logits); the tokens are those of run.c either way.
  // steps must be in [1, seq_len]; prompt must be non-empty with ids in [0, vocab_size); the
  // session must be open.
  Status generate(const std::int32_t* prompt, int n_prompt, int steps, const SamplerParams& params,
                  TokenCallback on_token, void* ctx, GenerateStats* stats);

  bool ready() const { return ready_; }
  const ModelSpec& spec() const { return spec_; }
  const WeightPlacement& placement() const { return placement_; }
  const MemoryPlan& plan() const { return plan_; }
  const Tokenizer& tokenizer() const { return tokenizer_; }
  // The sampler of the last generate(): its counts say how often the T -> 0 limit was taken.
  const Sampler& sampler() const { return sampler_; }
  Model& model() { return *model_; }
  const Kernels& kernels() const { return *kernels_; }
  int seq_len() const { return model_->seq_len(); }
  int threads() const { return parallel_ ? parallel_->workers() : 1; }
  // Prompt tokens per batched prefill pass (1: one at a time).
  int prefill_batch() const { return model_->prefill_batch(); }
  std::uint64_t arena_bytes() const { return arena_.used(); }
  // Reads and bytes taken from the model storage since open() began (header and weights;
  // counted by the storage layer).
  std::uint64_t model_reads() const { return model_reads_.reads(); }
  std::uint64_t model_bytes_read() const { return model_reads_.bytes(); }

 private:
  // The carving sequence shared by planning (measuring arena) and building.
  static Status carve_all(const ModelSpec& spec, int seq_len, const Kernels& kernels,
                          const WeightPlacement& placement, KvType kv, int prefill_batch, std::uint64_t piece_bytes,
                          std::size_t chunk_bytes, Arena& arena, Model* model, Tokenizer* tokenizer, Sampler* sampler,
                          unsigned char** chunk);
  // The plan of one placement, measured into *plan.
  static Status measure(Storage& model, const ModelSpec& spec, const SessionOptions& options,
                        const WeightPlacement& placement, int prefill_batch, std::uint64_t piece_bytes,
                        std::size_t chunk_bytes, void* model_memory, MemoryPlan* plan);
  // plan() with the measuring model object in `model_memory` (kModelObjectBytes, 16-aligned).
  static Status plan_in(Storage& model, Storage* tokenizer, const SessionOptions& options, ModelSpec* spec,
                        MemoryPlan* plan, WeightPlacement* placement, int* prefill_batch, void* model_memory);


  Arena arena_;
  ModelSpec spec_;
  MemoryPlan plan_;
  WeightPlacement placement_;
  int prefill_batch_ = 1;
  alignas(16) unsigned char model_memory_[kModelObjectBytes];  // the model object (model/model_kind.h)
  Model* model_ = nullptr;
  CountingStorage model_reads_;
  Tokenizer tokenizer_;
  Sampler sampler_;
  const Kernels* kernels_ = nullptr;
  Parallel* parallel_ = nullptr;
  double (*clock_)() = nullptr;
  bool opened_ = false;  // open() was called (it may have failed)
  bool ready_ = false;   // open() succeeded
};

}  // namespace pocketlm
