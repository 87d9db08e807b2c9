#include "pocketlm/runtime/planner.h"

#include <memory>
#include <new>

#include "pocketlm/format/file_kind.h"
#include "pocketlm/format/model_reader.h"
#include "pocketlm/model/model_kind.h"
#include "pocketlm/runtime/placement.h"
#include "pocketlm/runtime/session.h"
#include "pocketlm/runtime/session_plan.h"

namespace pocketlm {

namespace {

// The tokenizer's piece bytes and the read buffer for parsing it (no larger than the file).
Status tokenizer_sizes(Storage& tokenizer, const ModelSpec& spec, const SessionOptions& options,
                       std::uint64_t* piece_bytes, std::size_t* chunk) {
  // A file that starts like a known other kind (a GGUF or llama2.c model, a web page, a text
  // file: format/file_kind.h) is named as such, not by a record field of bytes that were never
  // records; planning sizes the tokenizer without reading it, so this is its only check.
  POCKETLM_TRY(name_foreign_file(tokenizer, Status(), ExpectedFile::kTokenizer));
  POCKETLM_TRY(Tokenizer::piece_bytes(tokenizer, spec.config.vocab_size, piece_bytes));
  *chunk = options.io_chunk_bytes;
  if (tokenizer.size() < *chunk) *chunk = static_cast<std::size_t>(tokenizer.size());
  return Status();
}

// A model object of `spec`'s kind in `memory` (kModelObjectBytes), destroyed when this goes
// out of scope.
class ScopedModel {
 public:
  explicit ScopedModel(void* memory) : memory_(memory) {}
  ~ScopedModel() {
    if (model_) model_->~Model();
  }
  ScopedModel(const ScopedModel&) = delete;
  ScopedModel& operator=(const ScopedModel&) = delete;
  Status construct(const char* file, const ModelSpec& spec) {
    const ModelKind* kind = nullptr;
    POCKETLM_TRY(find_model_kind(file, spec, &kind));
    model_ = kind->construct(memory_);
    return Status();
  }
  Model* get() { return model_; }

 private:
  void* memory_;
  Model* model_ = nullptr;
};

// The notes of a plan are written before carving (runtime/session_plan.cpp), its bytes by the
// carving itself: a region carved without a note would print bytes of the arena that no line
// explains. That is the planner's bug, named here. (A note without bytes is allowed: the
// classifier "shared with the embedding table" is one.)
Status check_carving_is_noted(const MemoryPlan& memory) {
  for (int i = 0; i < memory.size(); ++i) {
    const PlanRegion& r = memory.region(i);
    if (r.note[0] == '\0')
      return Status::error(StatusCode::kUnsupported, "plan: region %s (%llu bytes) was carved but has no note", r.name,
                           static_cast<unsigned long long>(r.bytes));
  }
  return Status();
}

// The memory plan of plan->placement and plan->prefill_batch, measured into plan->memory: the
// regions with their notes (runtime/session_plan.h), then the bytes of carve_session() on a
// measuring arena.
Status measure(const char* file, const SessionOptions& options, void* model_memory, SessionPlan* plan) {
  MemoryPlan& memory = plan->memory;
  memory.reset();
  if (options.device) {
    plan_tiers(*options.device, &memory);
  } else {
    // One RAM tier and the model file, where weights that do not fit stay.
    const PlanTier tiers[] = {{"ram", false, 0, 0}, {"model file", true, 0, 0}};
    memory.set_tiers(tiers, 2);
  }
  if (options.budget_bytes) memory.set_budget(options.budget_bytes);
  if (options.reserve_bytes)
    POCKETLM_TRY(memory.add_reserved(kProcessRegion, options.reserve_bytes,
                                     "the program itself: code, stacks, libraries (not the arena)"));
  POCKETLM_TRY(describe_session_regions(plan->spec, plan->placement, plan->seq_len, options.kv, plan->prefill_batch,
                                        session_kernels(options).attention_batch != nullptr, plan->chunk_bytes,
                                        &memory));
  if (options.chat)
    POCKETLM_TRY(memory.add(kChatHistoryRegion, 0, "chat: token ids and turn starts, 2 x seq_len x int32", Heat::kRare));
  if (options.chat && options.chat_text_bytes > 0)
    POCKETLM_TRY(memory.add(kChatTextRegion, 0, "chat: one rendered message and its encoding scratch", Heat::kRare));
  Arena measuring;
  measuring.init_measuring(&memory);
  ScopedModel m(model_memory);
  POCKETLM_TRY(m.construct(file, plan->spec));
  Tokenizer tok;
  Sampler sampler;
  SessionCarve carved;
  POCKETLM_TRY(carve_session(*plan, options, measuring, m.get(), &tok, &sampler, &carved));
  POCKETLM_TRY(check_carving_is_noted(memory));
  assign_ram_tiers(&memory);
  memory.set_storage_bytes_per_token(storage_cost(plan->spec, plan->placement).bytes_per_token);
  memory.set_storage_file_bytes(plan->spec.file_bytes);
  // A tokenizer file apart from the model is stored on the same medium (a flash partition).
  memory.set_storage_tokenizer_bytes(plan->tokenizer_file_bytes);
  return Status();
}

}  // namespace

Status carve_session(const SessionPlan& plan, const SessionOptions& options, Arena& arena, Model* model,
                     Tokenizer* tokenizer, Sampler* sampler, SessionCarve* out) {
  const ModelSpec& spec = plan.spec;
  const std::int32_t vocab = spec.config.vocab_size;
  POCKETLM_TRY(model->carve(spec, plan.seq_len, session_kernels(options), plan.placement, options.kv, arena));
  POCKETLM_TRY(model->carve_prefill(plan.prefill_batch, arena));
  POCKETLM_TRY(sampler->carve(vocab, arena));
  POCKETLM_TRY(tokenizer->carve(vocab, plan.piece_bytes, arena));
  void* p = nullptr;
  POCKETLM_TRY(arena.allocate(plan.chunk_bytes, kIoChunkRegion, &p));
  out->io_chunk = static_cast<unsigned char*>(p);
  if (options.chat) {
    const auto seq_len = static_cast<std::uint64_t>(plan.seq_len);
    POCKETLM_TRY(carve_array(arena, kChatHistoryRegion, seq_len, &out->chat_tokens));
    POCKETLM_TRY(carve_array(arena, kChatHistoryRegion, seq_len, &out->chat_starts));
    if (options.chat_text_bytes > 0) {
      std::size_t entries = 0;
      POCKETLM_TRY(Tokenizer::encode_capacity(options.chat_text_bytes, &entries));
      POCKETLM_TRY(carve_array(arena, kChatTextRegion, options.chat_text_bytes, &out->chat_text));
      POCKETLM_TRY(carve_array(arena, kChatTextRegion, entries, &out->chat_text_tokens));
      out->chat_text_bytes = options.chat_text_bytes;
      out->chat_text_token_entries = entries;
    }
  }
  return Status();
}

Status plan_session(Storage& model, Storage* tokenizer, const SessionOptions& options, SessionPlan* out) {
  alignas(16) unsigned char model_memory[kModelObjectBytes];
  return plan_session_in(model, tokenizer, options, model_memory, out);
}

Status plan_session_in(Storage& model, Storage* tokenizer, const SessionOptions& options, void* model_memory,
                       SessionPlan* out) {
  // Made afresh in place: a SessionPlan is kilobytes (its MemoryPlan), more than a temporary
  // may take of a device's stack frame (-Wstack-usage on the Cortex-M build).
  std::destroy_at(out);
  ::new (static_cast<void*>(out)) SessionPlan();
  ModelSpec& spec = out->spec;
  POCKETLM_TRY(read_model_spec(model, &spec));
  // Before any size below is taken as a size_t (32-bit hosts: a tensor of 4 GiB or more).
  POCKETLM_TRY(check_tensors_addressable(model.name(), spec, SIZE_MAX));
  if (options.seq_len < 0 || options.seq_len > spec.config.seq_len)
    return Status::error(StatusCode::kInvalidArgument, "seq_len = %d is outside [1, %d] (the model's seq_len)",
                         options.seq_len, spec.config.seq_len);
  if (options.prefill_batch < 0)
    return Status::error(StatusCode::kInvalidArgument, "prefill_batch = %d tokens; 0 (the plan's choice) or more",
                         options.prefill_batch);
  if (options.io_chunk_bytes == 0)
    return Status::error(StatusCode::kInvalidArgument, "io chunk: 0 bytes; reads need a positive chunk size");
  out->chunk_bytes = options.io_chunk_bytes;
  if (tokenizer) {
    POCKETLM_TRY(tokenizer_sizes(*tokenizer, spec, options, &out->piece_bytes, &out->chunk_bytes));
    out->tokenizer_file = true;
    out->tokenizer_file_bytes = tokenizer->size();
  } else if (spec.tokenizer.present) {
    out->piece_bytes = spec.tokenizer.piece_bytes;  // sizes from the header pass
  }
  out->model_file_bytes = model.size();
  out->seq_len = options.seq_len > 0 ? options.seq_len : spec.config.seq_len;

  // A batch the caller fixed is part of every plan; the plan's own choice comes after the
  // weights are placed, from the memory they leave (weights read once per token matter more
  // than prefill reading them once per block).
  // An f16 KV cache is filled one position at a time (the batched blocks write f32 rows).
  const bool one_at_a_time = options.kv == KvType::kF16;
  const int fixed_batch = one_at_a_time ? 1
                          : options.prefill_batch > 0
                              ? (options.prefill_batch < out->seq_len ? options.prefill_batch : out->seq_len)
                              : 1;
  // Everything resident first; while the RAM tiers overflow, leave in storage what frees the
  // shortfall at the fewest bytes read per token, and measure again (streaming adds buffers).
  out->placement.block_bytes = options.stream_block_bytes;
  const auto measure_at = [&](int batch) -> Status {
    out->prefill_batch = batch;
    return measure(model.name(), options, model_memory, out);
  };
  POCKETLM_TRY(measure_at(fixed_batch));
  while (!out->memory.fits()) {
    const std::uint64_t shortfall = out->memory.ram_shortfall();
    // The medium itself too small, or nothing left to move: the plan reports it as it is.
    if (shortfall == 0 || !shed_weights(spec, session_kernels(options), shortfall, &out->placement)) break;
    POCKETLM_TRY(measure_at(fixed_batch));
  }
  int batch = fixed_batch;
  if (options.prefill_batch == 0 && out->memory.fits() && !one_at_a_time) {
    // The largest power of two that still fits, from kMaxPrefillBatch down.
    for (batch = kMaxPrefillBatch; batch > 1; batch /= 2) {
      if (batch > out->seq_len) continue;
      POCKETLM_TRY(measure_at(batch));
      if (out->memory.fits()) break;
    }
  }
  return measure_at(batch);
}

Status check_plan_fits(const char* model, const SessionOptions& options, const SessionPlan& plan) {
  return plan.memory.overflow_error(model, options.device ? options.device->name : nullptr,
                                    plan.placement.any() ? ", even with the weights it can stream kept in storage"
                                                         : "");
}

}  // namespace pocketlm
