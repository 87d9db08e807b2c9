#include "pocketlm/runtime/session.h"

#include <bit>
#include <cstdint>

#include "pocketlm/base/byte_size.h"
#include "pocketlm/format/file_kind.h"
#include "pocketlm/format/model_reader.h"
#include "pocketlm/model/blocks.h"
#include "pocketlm/runtime/placement.h"
#include "pocketlm/runtime/planner.h"

namespace pocketlm {

const Kernels& session_kernels(const SessionOptions& options) {
  if (options.kernels) return *options.kernels;
  if (options.device && options.device->kernels) {
    const Kernels* device = find_kernels(options.device->kernels);
    if (device) return *device;
  }
  return default_kernels();
}

// Whether every logit is finite, in one cheap pass: NaN and +-inf are the floats whose exponent
// bits are all ones. Adding one to the exponent field carries out of it into bit 31 exactly for
// those, so an OR of (exponent + 1) over the logits has bit 31 set iff one is not finite: an
// AND, an ADD and an OR a logit, no compare (it vectorizes on hosts; a scalar core's 32000-entry
// vocabulary is 4 instructions a logit).
bool Session::logits_finite(const float* logits, int n) {
  std::uint32_t carried = 0;
  for (int i = 0; i < n; ++i) carried |= (std::bit_cast<std::uint32_t>(logits[i]) & 0x7f800000u) + 0x00800000u;
  return (carried & 0x80000000u) == 0;
}

Session::~Session() {
  if (model_) model_->~Model();
}

Status Session::open(Storage& model, Storage& tokenizer, const SessionOptions& options) {
  return open(model, &tokenizer, options);
}

Status Session::open(Storage& model, Storage* tokenizer, const SessionOptions& options) {
  if (opened_) return open_again(model);
  opened_ = true;
  // The plan in this session's own memory (a firmware's stack is a few KiB), the model
  // object's memory serving the measuring carves; header reads counted as the session's.
  model_reads_.wrap(&model);
  POCKETLM_TRY(plan_session_in(model_reads_, tokenizer, options, model_memory_, &plan_));
  return open_planned(model, tokenizer, options);
}

Status Session::open(const SessionPlan& plan, Storage& model, Storage* tokenizer, const SessionOptions& options) {
  if (opened_) return open_again(model);
  opened_ = true;
  if (plan.model_file_bytes != model.size() || plan.tokenizer_file != (tokenizer != nullptr) ||
      (tokenizer && plan.tokenizer_file_bytes != tokenizer->size()))
    return Status::error(StatusCode::kInvalidArgument,
                         "%s: the plan is for a model of %llu bytes%s, not these files (%llu bytes%s): plan them again",
                         model.name(), static_cast<unsigned long long>(plan.model_file_bytes),
                         plan.tokenizer_file ? " and a tokenizer file" : "",
                         static_cast<unsigned long long>(model.size()), tokenizer ? " and a tokenizer file" : "");
  model_reads_.wrap(&model);
  plan_ = plan;
  return open_planned(model, tokenizer, options);
}

Status Session::open_again(Storage& model) {
  return Status::error(StatusCode::kInvalidArgument, "%s: open() was already called on this session; use a new Session",
                       model.name());
}

Status Session::open_planned(Storage& model, Storage* tokenizer, const SessionOptions& options) {
  const ModelSpec& spec = plan_.spec;
  const MemoryPlan& memory = plan_.memory;
  if (!tokenizer && !spec.tokenizer.present) {
    if (spec.tokenizer.model[0])
      return Status::error(StatusCode::kUnsupported,
                           "%s: the model's tokenizer (tokenizer.ggml.model = '%s') is not one pocketlm reads, or has no "
                           "token list; give a tokenizer.bin with -z",
                           model.name(), spec.tokenizer.model);
    return Status::error(StatusCode::kInvalidArgument, "%s: the model file carries no tokenizer; give one with -z",
                         model.name());
  }
  POCKETLM_TRY(check_plan_fits(model.name(), options, plan_));
  // One block per RAM tier, each exactly the plan's regions in that tier.
  arena_.place_by(&memory);
  for (int t = 0; t < memory.tier_count(); ++t) {
    if (memory.tier(t).storage) continue;
    const std::uint64_t need = memory.arena_bytes(t);
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
                             model.name(), memory.tier(t).name, static_cast<unsigned long long>(arena_.capacity(t)),
                             buffer_bytes, static_cast<unsigned long long>(need));
      continue;
    }
    if (need == 0) continue;
    const Status st = arena_.init_owned(t, need);
    // Within budget yet refused: usually a header seq_len far beyond what the model needs.
    if (!st.ok())
      return Status::error(st.code(), "%s: %s; its kv cache alone is %llu bytes at seq_len = %d (--seq-len shrinks it)",
                           model.name(), st.message(),
                           static_cast<unsigned long long>(memory.bytes_of(region::kKvCache)), plan_.seq_len);
  }

  const ModelKind* kind = nullptr;
  POCKETLM_TRY(find_model_kind(model.name(), spec, &kind));
  model_ = kind->construct(model_memory_);
  kernels_ = &session_kernels(options);
  SessionCarve carved;
  POCKETLM_TRY(carve_session(plan_, options, arena_, model_, &tokenizer_, &sampler_, &carved));
  chat_tokens_ = carved.chat_tokens;
  chat_starts_ = carved.chat_starts;
  chat_text_ = carved.chat_text;
  chat_text_tokens_ = carved.chat_text_tokens;
  chat_text_bytes_ = carved.chat_text_bytes;
  chat_text_token_entries_ = carved.chat_text_token_entries;
  // The tokenizer is small and its errors are common: check it before reading the weights.
  if (tokenizer)
    POCKETLM_TRY(tokenizer_.load(*tokenizer, carved.io_chunk, plan_.chunk_bytes));
  else
    POCKETLM_TRY(tokenizer_.load_gguf(model_reads_, spec.tokenizer, spec.config.bos_id, spec.config.eos_id,
                                      carved.io_chunk, plan_.chunk_bytes));
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
