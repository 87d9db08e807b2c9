#include "pocketlm/runtime/session.h"

#include <bit>
#include <cstdint>

#include "pocketlm/base/byte_size.h"
#include "pocketlm/format/file_kind.h"
#include "pocketlm/format/model_reader.h"
#include "pocketlm/model/blocks.h"
#include "pocketlm/runtime/placement.h"
#include "pocketlm/runtime/session_plan.h"

namespace pocketlm {

namespace {

int effective_seq_len(const ModelSpec& spec, const SessionOptions& options) {
  return options.seq_len > 0 ? options.seq_len : spec.config.seq_len;
}

// The tokenizer's piece bytes and the read buffer for parsing it (no larger than the file).
Status tokenizer_sizes(Storage& tokenizer, const ModelSpec& spec, const SessionOptions& options,
                       std::uint64_t* piece_bytes, std::size_t* chunk) {
  // A file that starts like a known other kind (a GGUF or llama2.c model, a web page, a text
  // file: format/file_kind.h) is named as such, not by a record field of bytes that were never
  // records; plan() sizes the tokenizer without reading it, so this is its only check.
  POCKETLM_TRY(name_foreign_file(tokenizer, Status(), ExpectedFile::kTokenizer));
  POCKETLM_TRY(Tokenizer::piece_bytes(tokenizer, spec.config.vocab_size, piece_bytes));
  *chunk = options.io_chunk_bytes;
  if (tokenizer.size() < *chunk) *chunk = static_cast<std::size_t>(tokenizer.size());
  return Status();
}

// The same for a tokenizer inside the model file (GGUF): sizes from the header pass.
void embedded_tokenizer_sizes(const ModelSpec& spec, const SessionOptions& options, std::uint64_t* piece_bytes,
                              std::size_t* chunk) {
  *piece_bytes = spec.tokenizer.piece_bytes;
  *chunk = options.io_chunk_bytes;
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

}  // namespace

const Kernels& session_kernels(const SessionOptions& options) {
  if (options.kernels) return *options.kernels;
  if (options.device && options.device->kernels) {
    const Kernels* device = find_kernels(options.device->kernels);
    if (device) return *device;
  }
  return default_kernels();
}

// Whether every logit is finite, in one cheap pass: NaN and +-inf are the floats whose exponent
// bits are all ones, and an OR of integer compares vectorizes (a float sum would be a chain of
// dependent additions).
bool Session::logits_finite(const float* logits, int n) {
  unsigned non_finite = 0;
  for (int i = 0; i < n; ++i)
    non_finite |= static_cast<unsigned>((std::bit_cast<std::uint32_t>(logits[i]) & 0x7f800000u) == 0x7f800000u);
  return non_finite == 0;
}

Session::~Session() {
  if (model_) model_->~Model();
}

Status Session::carve_all(const ModelSpec& spec, int seq_len, const Kernels& kernels, const WeightPlacement& placement,
                          KvType kv, int prefill_batch, std::uint64_t piece_bytes, std::size_t chunk_bytes,
                          Arena& arena, Model* model, Tokenizer* tokenizer, Sampler* sampler, unsigned char** chunk,
                          bool chat, std::int32_t** chat_tokens, std::int32_t** chat_starts,
                          std::size_t chat_text_bytes, char** chat_text, std::int32_t** chat_text_tokens) {
  const std::int32_t vocab = spec.config.vocab_size;
  POCKETLM_TRY(model->carve(spec, seq_len, kernels, placement, kv, arena));
  POCKETLM_TRY(model->carve_prefill(prefill_batch, arena));
  POCKETLM_TRY(sampler->carve(vocab, arena));
  POCKETLM_TRY(tokenizer->carve(vocab, piece_bytes, arena));
  void* p = nullptr;
  POCKETLM_TRY(arena.allocate(chunk_bytes, kIoChunkRegion, &p));
  *chunk = static_cast<unsigned char*>(p);
  if (chat) {
    POCKETLM_TRY(carve_array(arena, kChatHistoryRegion, static_cast<std::uint64_t>(seq_len), chat_tokens));
    POCKETLM_TRY(carve_array(arena, kChatHistoryRegion, static_cast<std::uint64_t>(seq_len), chat_starts));
    if (chat_text_bytes > 0) {
      std::size_t entries = 0;
      POCKETLM_TRY(Tokenizer::encode_capacity(chat_text_bytes, &entries));
      POCKETLM_TRY(carve_array(arena, kChatTextRegion, chat_text_bytes, chat_text));
      POCKETLM_TRY(carve_array(arena, kChatTextRegion, entries, chat_text_tokens));
    }
  }
  return Status();
}

Status Session::measure(Storage& model, const ModelSpec& spec, const SessionOptions& options,
                        const WeightPlacement& placement, int prefill_batch, std::uint64_t piece_bytes,
                        std::size_t chunk, void* model_memory, MemoryPlan* plan) {
  plan->reset();
  if (options.device) {
    plan_tiers(*options.device, plan);
  } else {
    // One RAM tier and the model file, where weights that do not fit stay.
    const PlanTier tiers[] = {{"ram", false, 0, 0}, {"model file", true, 0, 0}};
    plan->set_tiers(tiers, 2);
  }
  if (options.budget_bytes) plan->set_budget(options.budget_bytes);
  if (options.reserve_bytes)
    POCKETLM_TRY(plan->add_reserved(kProcessRegion, options.reserve_bytes,
                                    "the program itself: code, stacks, libraries (not the arena)"));
  const int seq_len = effective_seq_len(spec, options);
  POCKETLM_TRY(describe_session_regions(spec, placement, seq_len, options.kv, prefill_batch,
                                        session_kernels(options).attention_batch != nullptr, chunk, plan));
  if (options.chat)
    POCKETLM_TRY(plan->add(kChatHistoryRegion, 0, "chat: token ids and turn starts, 2 x seq_len x int32", Heat::kRare));
  if (options.chat && options.chat_text_bytes > 0)
    POCKETLM_TRY(plan->add(kChatTextRegion, 0, "chat: one rendered message and its encoding scratch", Heat::kRare));
  Arena measuring;
  measuring.init_measuring(plan);
  ScopedModel m(model_memory);
  POCKETLM_TRY(m.construct(model.name(), spec));
  Tokenizer tok;
  Sampler sampler;
  unsigned char* buffer = nullptr;
  std::int32_t *chat_tokens = nullptr, *chat_starts = nullptr, *chat_text_tokens = nullptr;
  char* chat_text = nullptr;
  POCKETLM_TRY(carve_all(spec, seq_len, session_kernels(options), placement, options.kv, prefill_batch, piece_bytes, chunk,
                         measuring, m.get(), &tok, &sampler, &buffer, options.chat, &chat_tokens, &chat_starts,
                         options.chat_text_bytes, &chat_text, &chat_text_tokens));
  assign_ram_tiers(plan);
  plan->set_storage_bytes_per_token(storage_cost(spec, placement).bytes_per_token);
  plan->set_storage_file_bytes(spec.file_bytes);
  return Status();
}

Status Session::plan(Storage& model, Storage* tokenizer, const SessionOptions& options, ModelSpec* spec,
                     MemoryPlan* plan, WeightPlacement* placement, int* prefill_batch) {
  alignas(16) unsigned char model_memory[kModelObjectBytes];
  return plan_in(model, tokenizer, options, spec, plan, placement, prefill_batch, model_memory);
}

Status Session::plan_in(Storage& model, Storage* tokenizer, const SessionOptions& options, ModelSpec* spec,
                        MemoryPlan* plan, WeightPlacement* placement, int* prefill_batch, void* model_memory) {
  POCKETLM_TRY(read_model_spec(model, spec));
  // Before any size below is taken as a size_t (32-bit hosts: a tensor of 4 GiB or more).
  POCKETLM_TRY(check_tensors_addressable(model.name(), *spec, SIZE_MAX));
  if (options.seq_len < 0 || options.seq_len > spec->config.seq_len)
    return Status::error(StatusCode::kInvalidArgument, "seq_len = %d is outside [1, %d] (the model's seq_len)",
                         options.seq_len, spec->config.seq_len);
  if (options.prefill_batch < 0)
    return Status::error(StatusCode::kInvalidArgument, "prefill_batch = %d tokens; 0 (the plan's choice) or more",
                         options.prefill_batch);
  if (options.io_chunk_bytes == 0)
    return Status::error(StatusCode::kInvalidArgument, "io chunk: 0 bytes; reads need a positive chunk size");
  std::uint64_t piece_bytes = 0;
  std::size_t chunk = options.io_chunk_bytes;
  if (tokenizer)
    POCKETLM_TRY(tokenizer_sizes(*tokenizer, *spec, options, &piece_bytes, &chunk));
  else if (spec->tokenizer.present)
    embedded_tokenizer_sizes(*spec, options, &piece_bytes, &chunk);

  // A batch the caller fixed is part of every plan; the plan's own choice comes after the
  // weights are placed, from the memory they leave (weights read once per token matter more
  // than prefill reading them once per block).
  const int seq_len = effective_seq_len(*spec, options);
  // An f16 KV cache is filled one position at a time (the batched blocks write f32 rows).
  const bool one_at_a_time = options.kv == KvType::kF16;
  const int fixed_batch = one_at_a_time            ? 1
                          : options.prefill_batch > 0 ? (options.prefill_batch < seq_len ? options.prefill_batch : seq_len)
                                                      : 1;
  // Everything resident first; while the RAM tiers overflow, leave in storage what frees the
  // shortfall at the fewest bytes read per token, and measure again (streaming adds buffers).
  WeightPlacement chosen;
  chosen.block_bytes = options.stream_block_bytes;
  // A tokenizer file apart from the model is stored on the same medium (a flash partition).
  const std::uint64_t tokenizer_file_bytes = tokenizer ? tokenizer->size() : 0;
  const auto measure_at = [&](int batch) -> Status {
    POCKETLM_TRY(measure(model, *spec, options, chosen, batch, piece_bytes, chunk, model_memory, plan));
    plan->set_storage_tokenizer_bytes(tokenizer_file_bytes);
    return Status();
  };
  POCKETLM_TRY(measure_at(fixed_batch));
  while (!plan->fits()) {
    const std::uint64_t shortfall = plan->ram_shortfall();
    // The medium itself too small, or nothing left to move: the plan reports it as it is.
    if (shortfall == 0 || !shed_weights(*spec, session_kernels(options), shortfall, &chosen)) break;
    POCKETLM_TRY(measure_at(fixed_batch));
  }
  const bool found = plan->fits();
  int batch = fixed_batch;
  if (options.prefill_batch == 0 && found && !one_at_a_time) {
    // The largest power of two that still fits, from kMaxPrefillBatch down.
    for (batch = kMaxPrefillBatch; batch > 1; batch /= 2) {
      if (batch > seq_len) continue;
      POCKETLM_TRY(measure_at(batch));
      if (plan->fits()) break;
    }
  }
  POCKETLM_TRY(measure_at(batch));
  if (placement) *placement = chosen;
  if (prefill_batch) *prefill_batch = batch;
  return Status();
}

Status Session::check_fits(const char* model, const SessionOptions& options, const MemoryPlan& plan,
                           const WeightPlacement& placement) {
  return plan.overflow_error(model, options.device ? options.device->name : nullptr,
                             placement.any() ? ", even with the weights it can stream kept in storage" : "");
}

Status Session::open(Storage& model, Storage& tokenizer, const SessionOptions& options) {
  return open(model, &tokenizer, options);
}

Status Session::open(Storage& model, Storage* tokenizer, const SessionOptions& options) {
  if (opened_)
    return Status::error(StatusCode::kInvalidArgument, "%s: open() was already called on this session; use a new Session",
                         model.name());
  opened_ = true;
  model_reads_.wrap(&model);
  const ModelSpec& spec = spec_;
  // The model object's own memory serves the measuring carves: no second object on the stack.
  POCKETLM_TRY(plan_in(model_reads_, tokenizer, options, &spec_, &plan_, &placement_, &prefill_batch_, model_memory_));
  if (!tokenizer && !spec.tokenizer.present) {
    if (spec.tokenizer.model[0])
      return Status::error(StatusCode::kUnsupported,
                           "%s: the model's tokenizer (tokenizer.ggml.model = '%s') is not one pocketlm reads, or has no "
                           "token list; give a tokenizer.bin with -z",
                           model.name(), spec.tokenizer.model);
    return Status::error(StatusCode::kInvalidArgument, "%s: the model file carries no tokenizer; give one with -z",
                         model.name());
  }
  POCKETLM_TRY(check_fits(model.name(), options, plan_, placement_));
  const int seq_len = effective_seq_len(spec, options);
  // One block per RAM tier, each exactly the plan's regions in that tier.
  arena_.place_by(&plan_);
  for (int t = 0; t < plan_.tier_count(); ++t) {
    if (plan_.tier(t).storage) continue;
    const std::uint64_t need = plan_.arena_bytes(t);
    void* buffer = options.tier_buffers[t];
    std::size_t buffer_bytes = options.tier_buffer_bytes[t];
    // The port's block, with room for aligning its start (Arena::kAlignment).
    if (!buffer && need > 0 && options.tier_allocator && need <= SIZE_MAX - Arena::kAlignment) {
      buffer_bytes = static_cast<std::size_t>(need) + Arena::kAlignment;
      buffer = options.tier_allocator(options.tier_allocator_ctx, t, buffer_bytes);
    }
    if (buffer) {
      arena_.init_borrowed(t, buffer, buffer_bytes);
      // Checked here, not mid-carve, so the error gives the plan's figure.
      if (arena_.capacity(t) < need)
        return Status::error(StatusCode::kOutOfMemory,
                             "%s: the buffer for tier %s holds %llu usable bytes (of %zu, after 16-byte alignment) "
                             "but the plan needs %llu there",
                             model.name(), plan_.tier(t).name, static_cast<unsigned long long>(arena_.capacity(t)),
                             buffer_bytes, static_cast<unsigned long long>(need));
      continue;
    }
    if (need == 0) continue;
    const Status st = arena_.init_owned(t, need);
    // Within budget yet refused: usually a header seq_len far beyond what the model needs.
    if (!st.ok())
      return Status::error(st.code(), "%s: %s; its kv cache alone is %llu bytes at seq_len = %d (--seq-len shrinks it)",
                           model.name(), st.message(),
                           static_cast<unsigned long long>(plan_.bytes_of(region::kKvCache)), seq_len);
  }

  std::uint64_t piece_bytes = 0;
  std::size_t chunk = 0;
  if (tokenizer)
    POCKETLM_TRY(tokenizer_sizes(*tokenizer, spec, options, &piece_bytes, &chunk));
  else
    embedded_tokenizer_sizes(spec, options, &piece_bytes, &chunk);
  const ModelKind* kind = nullptr;
  POCKETLM_TRY(find_model_kind(model.name(), spec, &kind));
  model_ = kind->construct(model_memory_);
  unsigned char* buffer = nullptr;
  kernels_ = &session_kernels(options);
  POCKETLM_TRY(carve_all(spec, seq_len, *kernels_, placement_, options.kv, prefill_batch_, piece_bytes, chunk, arena_,
                         model_, &tokenizer_, &sampler_, &buffer, options.chat, &chat_tokens_, &chat_starts_,
                         options.chat_text_bytes, &chat_text_, &chat_text_tokens_));
  if (chat_text_) {
    chat_text_bytes_ = options.chat_text_bytes;
    POCKETLM_TRY(Tokenizer::encode_capacity(chat_text_bytes_, &chat_text_token_entries_));
  }
  // The tokenizer is small and its errors are common: check it before reading the weights.
  if (tokenizer)
    POCKETLM_TRY(tokenizer_.load(*tokenizer, buffer, chunk));
  else
    POCKETLM_TRY(tokenizer_.load_gguf(model_reads_, spec.tokenizer, spec.config.bos_id, spec.config.eos_id, buffer,
                                      chunk));
  tokenizer_.set_special_tokens(spec.config.bos_id, spec.config.eos_id);
  POCKETLM_TRY(model_->load(model_reads_, options.io_chunk_bytes, options.read_queue));
  parallel_ = options.parallel;
  model_->set_parallel(parallel_);
  abort_ = options.abort;
  model_->set_abort(abort_);
  clock_ = options.clock;
  clock_ticks_per_second_ = options.clock_ticks_per_second ? options.clock_ticks_per_second : 1;
  ready_ = true;
  return Status();
}

Status Session::prompt_capacity(std::size_t len, std::size_t* entries) const {
  const std::uint64_t at_least = 1 + tokenizer_.min_tokens(len);  // BOS, then the text's
  if (at_least > static_cast<std::uint64_t>(seq_len()))
    return Status::error(StatusCode::kInvalidArgument,
                         "text: %zu bytes encode to at least %llu tokens (a token spells at most %d "
                         "bytes) but the context holds %d (seq_len)",
                         len, static_cast<unsigned long long>(at_least), tokenizer_.longest_piece(), seq_len());
  return Tokenizer::encode_capacity(len, entries);
}

Status Session::encode(const char* text, std::size_t len, std::int32_t* tokens, std::size_t capacity, int* n) const {
  std::size_t entries = 0;
  POCKETLM_TRY(prompt_capacity(len, &entries));
  POCKETLM_TRY(tokenizer_.encode(text, len, /*bos=*/true, /*eos=*/false, tokens, capacity, n));
  if (*n > seq_len())
    return Status::error(StatusCode::kInvalidArgument,
                         "text: encodes to %d tokens but the context holds %d (seq_len)", *n, seq_len());
  return Status();
}

int Session::prefill_block(int remaining) const {
  const int batch = model_->prefill_batch();
  return batch > 1 && remaining >= 2 ? (remaining < batch ? remaining : batch) : 0;
}

Status Session::generate(const std::int32_t* prompt, int n_prompt, int steps, const SamplerParams& params,
                         TokenCallback on_token, void* ctx, GenerateStats* stats) {
  if (!ready_)
    return Status::error(StatusCode::kInvalidArgument, "session: generate() needs a session that opened successfully");
  const int vocab = spec().config.vocab_size;
  if (steps < 1 || steps > seq_len())
    return Status::error(StatusCode::kInvalidArgument, "steps = %d is outside [1, %d] (seq_len)", steps,
                         seq_len());
  if (n_prompt < 1) return Status::error(StatusCode::kInvalidArgument, "prompt: at least one token (BOS) is needed");
  for (int i = 0; i < n_prompt; ++i)
    if (prompt[i] < 0 || prompt[i] >= vocab)
      return Status::error(StatusCode::kInvalidArgument, "prompt: token %d = %d is outside [0, %d)", i, static_cast<int>(prompt[i]),
                           vocab);
  if (params.seed == 0)
    return Status::error(StatusCode::kInvalidArgument, "seed = 0 would stall the xorshift generator");
  sampler_.configure(params, *kernels_);
  chat_begun_ = false;  // the kv cache is overwritten
  begin_call();

  const int bos = spec().config.bos_id;
  auto now = [this] { return clock_ ? clock_() : std::uint64_t{0}; };
  GenerateStats s;
  // Integer ticks per phase; seconds at the end.
  std::uint64_t prefill_ticks = 0, decode_ticks = 0, first_token_ticks = 0;
  s.prompt_tokens = n_prompt;
  const std::uint64_t reads_before = model_reads_.reads(), bytes_before = model_reads_.bytes();
  const std::uint64_t seeks_before = model_reads_.seeks();
  const std::uint64_t start = now();
  std::uint64_t last = start, first_pass_end = start;
  int first_passes = 0;  // positions the first forward call ran (a block of prompt tokens, or 1)
  int pos = 0;
  bool stopped = false;
  // Prefill: the passes whose next token is forced (pos < n_prompt - 1) go in blocks, with no
  // logits; the last prompt token's pass, whose logits are sampled, is the loop's below.
  const int forced_end = n_prompt - 1 < steps ? n_prompt - 1 : steps;
  while (!stopped) {
    const int count = prefill_block(forced_end - pos);
    if (count == 0) break;
    if (const Status aborted = check_abort(); !aborted.ok()) {
      model_->settle();
      return aborted;
    }
    const std::uint64_t bytes = model_reads_.bytes(), seeks = model_reads_.seeks();
    model_->forward_batch(prompt + pos, count, pos);
    const Status read = model_->status();
    if (!read.ok()) {
      model_->settle();
      return read;
    }
    const std::uint64_t t = now();
    prefill_ticks += t - last;
    s.prefill_storage_bytes += model_reads_.bytes() - bytes;
    s.prefill_storage_seeks += model_reads_.seeks() - seeks;
    last = t;
    if (first_passes == 0) {
      first_pass_end = t;
      first_passes = count;
    }
    // The block's forced tokens, in order, as run.c's loop would report them.
    for (int i = 0; i < count && !stopped; ++i, ++pos) {
      const std::int32_t next = prompt[pos + 1];
      ++s.prefill_passes;
      const bool keep_going = on_token ? on_token(prompt[pos], next, ctx) : true;
      stopped = next == bos || !keep_going;
    }
  }
  std::int32_t token = prompt[pos];
  while (!stopped && pos < steps) {
    if (const Status aborted = check_abort(); !aborted.ok()) {
      model_->settle();
      return aborted;
    }
    const std::uint64_t bytes = model_reads_.bytes(), seeks = model_reads_.seeks();
    float* logits = model_->forward(token, pos);
    // A read of weights kept in storage failed (the pass computed on zeros): stop.
    const Status read = model_->status();
    if (!read.ok()) {
      model_->settle();
      return read;
    }
    // A finite but extreme model can still overflow; sampling NaNs would print garbage.
    if (!logits_finite(logits, vocab))
      return Status::error(StatusCode::kBadFormat,
                           "model: the logits at position %d are not finite (NaN or inf): the weights overflow float "
                           "arithmetic; stopping instead of sampling",
                           pos);
    const bool forced = pos < n_prompt - 1;
    const std::int32_t next = forced ? prompt[pos + 1] : sampler_.sample(logits);
    const std::uint64_t t = now();
    if (forced) {
      ++s.prefill_passes;
      prefill_ticks += t - last;
      s.prefill_storage_bytes += model_reads_.bytes() - bytes;
      s.prefill_storage_seeks += model_reads_.seeks() - seeks;
    } else {
      if (s.decode_passes == 0) first_token_ticks = t - start;
      ++s.decode_passes;
      s.decode_kv_positions += static_cast<std::uint64_t>(pos) + 1;
      decode_ticks += t - last;
    }
    last = t;
    if (first_passes == 0) {
      first_pass_end = t;
      first_passes = 1;
    }
    ++pos;
    const bool keep_going = on_token ? on_token(token, next, ctx) : true;
    if (next == bos || !keep_going) break;
    token = next;
  }
  model_->settle();
  s.storage_reads = model_reads_.reads() - reads_before;
  s.storage_seeks = model_reads_.seeks() - seeks_before;
  s.storage_bytes = model_reads_.bytes() - bytes_before;
  s.prefill_seconds = seconds(prefill_ticks);
  s.decode_seconds = seconds(decode_ticks);
  s.first_token_seconds = seconds(first_token_ticks);
  const double elapsed = seconds(last - first_pass_end);
  // run.c's figure, counting the positions after the first forward call.
  s.achieved_tok_per_s = pos > first_passes && elapsed > 0 ? (pos - first_passes) / elapsed : 0.0;
  if (stats) *stats = s;
  return Status();
}

Status Session::check_abort() const {
  if (abort_ && abort_->load(std::memory_order_relaxed) != 0)
    return Status::error(StatusCode::kAborted, "aborted: the abort flag was set (between tokens)");
  return Status();
}

Status Session::decode(const std::int32_t* tokens, int n, int pos, const float** logits) {
  if (!ready_)
    return Status::error(StatusCode::kInvalidArgument, "session: decode() needs a session that opened successfully");
  if (!tokens || !logits) return Status::error(StatusCode::kInvalidArgument, "decode: %s: null", !tokens ? "tokens" : "logits");
  *logits = nullptr;
  if (n < 1) return Status::error(StatusCode::kInvalidArgument, "decode: n = %d tokens; at least 1", n);
  if (pos < 0 || pos > seq_len() - n)
    return Status::error(StatusCode::kInvalidArgument, "decode: positions %d..%d are outside the context [0, %d)", pos,
                         pos + n - 1, seq_len());
  const int vocab = spec().config.vocab_size;
  for (int i = 0; i < n; ++i)
    if (tokens[i] < 0 || tokens[i] >= vocab)
      return Status::error(StatusCode::kInvalidArgument, "decode: token %d = %d is outside [0, %d)", i,
                           static_cast<int>(tokens[i]), vocab);
  chat_begun_ = false;  // the kv cache is the caller's now
  begin_call();
  POCKETLM_TRY(check_abort());
  int blocks = 0;
  Status st = run_positions(tokens, n - 1, pos, &blocks);
  float* out = nullptr;
  if (st.ok()) st = check_abort();
  if (st.ok()) {
    out = model_->forward(tokens[n - 1], pos + n - 1);
    st = model_->status();
  }
  model_->settle();
  POCKETLM_TRY(st);
  if (!logits_finite(out, vocab))
    return Status::error(StatusCode::kBadFormat,
                         "model: the logits at position %d are not finite (NaN or inf): the weights overflow float "
                         "arithmetic",
                         pos + n - 1);
  *logits = out;
  return Status();
}

}  // namespace pocketlm
