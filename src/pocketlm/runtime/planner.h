// Planning apart from any session: the files and a SessionOptions in, a SessionPlan out, no
// allocation and no live session touched. A Session is then opened from the plan
// (Session::open(const SessionPlan&, ...)), so what it carves is what was planned: both go
// through carve_session(), the measuring arena recording each region's bytes as it is carved.
#pragma once

#include <cstddef>
#include <cstdint>

#include "pocketlm/base/status.h"
#include "pocketlm/format/model_spec.h"
#include "pocketlm/io/storage.h"
#include "pocketlm/kernels/kernels.h"
#include "pocketlm/memory/arena.h"
#include "pocketlm/memory/memory_plan.h"
#include "pocketlm/model/blocks.h"
#include "pocketlm/model/model.h"
#include "pocketlm/model/weight_placement.h"
#include "pocketlm/sampling/sampler.h"
#include "pocketlm/text/tokenizer.h"

namespace pocketlm {

struct SessionOptions;  // runtime/session.h

// Everything planning decides for one model, tokenizer and SessionOptions.
struct SessionPlan {
  ModelSpec spec;             // the model file's header
  MemoryPlan memory;          // every region's bytes, tier and note; fits() says whether it fits
  WeightPlacement placement;  // the weights kept in storage (runtime/placement.h)
  int prefill_batch = 1;      // prompt tokens per prefill pass
  int seq_len = 0;            // the context the kv cache is carved for (tokens)
  std::uint64_t piece_bytes = 0;      // the tokenizer's piece bytes (its tables' size)
  std::size_t chunk_bytes = 0;        // the tokenizer read buffer
  std::uint64_t model_file_bytes = 0;  // the storages the plan is for: open() checks them
  std::uint64_t tokenizer_file_bytes = 0;
  bool tokenizer_file = false;  // a tokenizer apart from the model (else the model's own)
};

// Plans `model` (header only) and `tokenizer` (size only; null: the model's own tokenizer when
// it carries one, else none) under `options`, without allocating: when the weights do not all
// fit the RAM tiers, keeps in storage what costs the fewest bytes read per token
// (runtime/placement.h) and measures again (streaming adds buffers). A plan that does not fit
// even so is returned too (out->memory.fits() false; its shortfall is the least RAM the model
// runs in). The prefill batch is options.prefill_batch when set, else the largest power of two
// up to kMaxPrefillBatch (and seq_len) whose activations still fit once the weights are placed.
// Errors: a bad header, seq_len outside [0, the model's], prefill_batch < 0, io_chunk_bytes 0.
Status plan_session(Storage& model, Storage* tokenizer, const SessionOptions& options, SessionPlan* out);
// The same with the measuring model object in `model_memory` (kModelObjectBytes, 16-aligned):
// Session::open lends its own, so no second object goes on a small stack.
Status plan_session_in(Storage& model, Storage* tokenizer, const SessionOptions& options, void* model_memory,
                       SessionPlan* out);

// Ok when `plan` fits, else the one-line error open() gives: the tier that overflows, what it
// needs and holds (MemoryPlan::overflow_error), naming `model` and the device.
Status check_plan_fits(const char* model, const SessionOptions& options, const SessionPlan& plan);

// What carve_session() hands out of the arena besides the model's own regions.
struct SessionCarve {
  unsigned char* io_chunk = nullptr;        // plan.chunk_bytes
  std::int32_t* chat_tokens = nullptr;      // with chat: [seq_len]
  std::int32_t* chat_starts = nullptr;      // with chat: [seq_len]
  char* chat_text = nullptr;                // with chat_text_bytes: [chat_text_bytes]
  std::int32_t* chat_text_tokens = nullptr;  // [chat_text_token_entries]
  std::size_t chat_text_bytes = 0;           // 0 without chat text
  std::size_t chat_text_token_entries = 0;   // Tokenizer::encode_capacity(chat_text_bytes)
};
// The carving sequence of a session, the same for planning (a measuring arena, which records
// each region's bytes into the plan) and for opening (the real arena): model, prefill
// activations, sampler, tokenizer, io chunk and the chat buffers of `options`.
Status carve_session(const SessionPlan& plan, const SessionOptions& options, Arena& arena, Model* model,
                     Tokenizer* tokenizer, Sampler* sampler, SessionCarve* out);

}  // namespace pocketlm
