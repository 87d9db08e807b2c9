#include "pocketlm/runtime/session.h"

#include <cstdint>

#include "pocketlm/base/byte_size.h"
#include "pocketlm/format/model_reader.h"
#include "pocketlm/model/blocks.h"
#include "pocketlm/runtime/session_plan.h"

namespace pocketlm {

namespace {

int effective_seq_len(const ModelSpec& spec, const SessionOptions& options) {
  return options.seq_len > 0 ? options.seq_len : spec.config.seq_len;
}

const Kernels& kernels_of(const SessionOptions& options) {
  return options.kernels ? *options.kernels : default_kernels();
}

// The tokenizer's piece bytes and the read buffer for parsing it (no larger than the file).
Status tokenizer_sizes(const Storage& tokenizer, const ModelSpec& spec, const SessionOptions& options,
                       std::uint64_t* piece_bytes, std::size_t* chunk) {
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

// Whether every logit is finite, in one cheap pass: x * 0 is 0 for a finite x and NaN for NaN
// or inf, so the sum stays 0 exactly when all are finite (four sums break the add chain).
bool logits_finite(const float* logits, int n) {
  float s0 = 0.0f, s1 = 0.0f, s2 = 0.0f, s3 = 0.0f;
  int i = 0;
  for (; i + 4 <= n; i += 4) {
    s0 += logits[i] * 0.0f;
    s1 += logits[i + 1] * 0.0f;
    s2 += logits[i + 2] * 0.0f;
    s3 += logits[i + 3] * 0.0f;
  }
  for (; i < n; ++i) s0 += logits[i] * 0.0f;
  return s0 + s1 + s2 + s3 == 0.0f;
}

// A model object of `spec`'s kind in `memory`, destroyed when this goes out of scope.
class ScopedModel {
 public:
  ScopedModel() = default;
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
  alignas(16) unsigned char memory_[kModelObjectBytes];
  Model* model_ = nullptr;
};

}  // namespace

Session::~Session() {
  if (model_) model_->~Model();
}

Status Session::carve_all(const ModelSpec& spec, int seq_len, const Kernels& kernels, std::uint64_t piece_bytes,
                          std::size_t chunk_bytes, Arena& arena, Model* model, Tokenizer* tokenizer,
                          Sampler* sampler, unsigned char** chunk) {
  const std::int32_t vocab = spec.config.vocab_size;
  POCKETLM_TRY(model->carve(spec, seq_len, kernels, arena));
  POCKETLM_TRY(sampler->carve(vocab, arena));
  POCKETLM_TRY(tokenizer->carve(vocab, piece_bytes, arena));
  void* p = nullptr;
  POCKETLM_TRY(arena.allocate(chunk_bytes, kIoChunkRegion, &p));
  *chunk = static_cast<unsigned char*>(p);
  return Status();
}

Status Session::plan(Storage& model, Storage* tokenizer, const SessionOptions& options, ModelSpec* spec,
                     MemoryPlan* plan) {
  POCKETLM_TRY(read_model_spec(model, spec));
  // Before any size below is taken as a size_t (32-bit hosts: a tensor of 4 GiB or more).
  POCKETLM_TRY(check_tensors_addressable(model.name(), *spec, SIZE_MAX));
  if (options.seq_len < 0 || options.seq_len > spec->config.seq_len)
    return Status::error(StatusCode::kInvalidArgument, "--seq-len: %d is outside [1, %d] (the model's seq_len)",
                         options.seq_len, spec->config.seq_len);
  if (options.io_chunk_bytes == 0)
    return Status::error(StatusCode::kInvalidArgument, "io chunk: 0 bytes; reads need a positive chunk size");
  const int seq_len = effective_seq_len(*spec, options);
  std::uint64_t piece_bytes = 0;
  std::size_t chunk = options.io_chunk_bytes;
  if (tokenizer)
    POCKETLM_TRY(tokenizer_sizes(*tokenizer, *spec, options, &piece_bytes, &chunk));
  else if (spec->tokenizer.present)
    embedded_tokenizer_sizes(*spec, options, &piece_bytes, &chunk);
  *plan = MemoryPlan();
  POCKETLM_TRY(describe_session_regions(*spec, seq_len, chunk, plan));
  Arena measuring;
  measuring.init_measuring(plan);
  ScopedModel m;
  POCKETLM_TRY(m.construct(model.name(), *spec));
  Tokenizer tok;
  Sampler sampler;
  unsigned char* buffer = nullptr;
  POCKETLM_TRY(carve_all(*spec, seq_len, kernels_of(options), piece_bytes, chunk, measuring, m.get(), &tok,
                         &sampler, &buffer));
  POCKETLM_TRY(plan->add(kPaddingRegion, measuring.padding(), ""));
  plan->set_budget(options.budget_bytes);
  return Status();
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
  POCKETLM_TRY(plan(model_reads_, tokenizer, options, &spec_, &plan_));
  if (!tokenizer && !spec.tokenizer.present) {
    if (spec.tokenizer.model[0])
      return Status::error(StatusCode::kUnsupported,
                           "%s: the model's tokenizer (tokenizer.ggml.model = '%s') is not one pocketlm reads, or has no "
                           "token list; give a tokenizer.bin with -z",
                           model.name(), spec.tokenizer.model);
    return Status::error(StatusCode::kInvalidArgument, "%s: the model file carries no tokenizer; give one with -z",
                         model.name());
  }
  const std::uint64_t need = plan_.total();
  if (!plan_.fits()) {
    char need_h[32], budget_h[32];
    format_byte_size(need, need_h, sizeof need_h);
    format_byte_size(plan_.budget(), budget_h, sizeof budget_h);
    return Status::error(StatusCode::kOutOfMemory,
                         "%s: the session needs %llu bytes (%s) but the budget is %llu bytes (%s)", model.name(),
                         static_cast<unsigned long long>(need), need_h,
                         static_cast<unsigned long long>(plan_.budget()), budget_h);
  }
  const int seq_len = effective_seq_len(spec, options);
  if (options.arena_buffer) {
    arena_.init_borrowed(options.arena_buffer, options.arena_buffer_bytes);
    // Checked here, not mid-carve, so the error gives the plan's figure.
    if (arena_.capacity() < need)
      return Status::error(StatusCode::kOutOfMemory,
                           "%s: the arena buffer holds %llu usable bytes (of %zu, after 16-byte alignment) but the "
                           "plan needs %llu",
                           model.name(), static_cast<unsigned long long>(arena_.capacity()),
                           options.arena_buffer_bytes, static_cast<unsigned long long>(need));
  } else {
    const Status st = arena_.init_owned(need);
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
  kernels_ = &kernels_of(options);
  POCKETLM_TRY(carve_all(spec, seq_len, *kernels_, piece_bytes, chunk, arena_, model_, &tokenizer_, &sampler_,
                         &buffer));
  // The tokenizer is small and its errors are common: check it before reading the weights.
  if (tokenizer)
    POCKETLM_TRY(tokenizer_.load(*tokenizer, buffer, chunk));
  else
    POCKETLM_TRY(tokenizer_.load_gguf(model_reads_, spec.tokenizer, spec.config.bos_id, spec.config.eos_id, buffer,
                                      chunk));
  tokenizer_.set_special_tokens(spec.config.bos_id, spec.config.eos_id);
  POCKETLM_TRY(model_->load(model_reads_, options.io_chunk_bytes));
  parallel_ = options.parallel;
  model_->set_parallel(parallel_);
  clock_ = options.clock;
  ready_ = true;
  return Status();
}

Status Session::encode(const char* text, std::size_t len, std::int32_t* tokens, std::size_t capacity, int* n) const {
  POCKETLM_TRY(tokenizer_.encode(text, len, /*bos=*/true, /*eos=*/false, tokens, capacity, n));
  if (*n > seq_len())
    return Status::error(StatusCode::kInvalidArgument,
                         "-i: the prompt encodes to %d tokens but the context holds %d (seq_len)", *n, seq_len());
  return Status();
}

Status Session::generate(const std::int32_t* prompt, int n_prompt, int steps, const SamplerParams& params,
                         TokenCallback on_token, void* ctx, GenerateStats* stats) {
  if (!ready_)
    return Status::error(StatusCode::kInvalidArgument, "session: generate() needs a session that opened successfully");
  const int vocab = spec().config.vocab_size;
  if (steps < 1 || steps > seq_len())
    return Status::error(StatusCode::kInvalidArgument, "-n: steps = %d is outside [1, %d] (seq_len)", steps,
                         seq_len());
  if (n_prompt < 1) return Status::error(StatusCode::kInvalidArgument, "prompt: at least one token (BOS) is needed");
  for (int i = 0; i < n_prompt; ++i)
    if (prompt[i] < 0 || prompt[i] >= vocab)
      return Status::error(StatusCode::kInvalidArgument, "prompt: token %d = %d is outside [0, %d)", i, static_cast<int>(prompt[i]),
                           vocab);
  if (params.seed == 0)
    return Status::error(StatusCode::kInvalidArgument, "-s: seed 0 would stall the xorshift generator");
  sampler_.configure(params, *kernels_);

  const int bos = spec().config.bos_id;
  auto now = [this] { return clock_ ? clock_() : 0.0; };
  GenerateStats s;
  s.prompt_tokens = n_prompt;
  const double start = now();
  double last = start, first_pass_end = start;
  std::int32_t token = prompt[0];
  int pos = 0;
  while (pos < steps) {
    float* logits = model_->forward(token, pos);
    // A finite but extreme model can still overflow; sampling NaNs would print garbage.
    if (!logits_finite(logits, vocab))
      return Status::error(StatusCode::kBadFormat,
                           "model: the logits at position %d are not finite (NaN or inf): the weights overflow float "
                           "arithmetic; stopping instead of sampling",
                           pos);
    const bool forced = pos < n_prompt - 1;
    const std::int32_t next = forced ? prompt[pos + 1] : sampler_.sample(logits);
    const double t = now();
    if (forced) {
      ++s.prefill_passes;
      s.prefill_seconds += t - last;
    } else {
      if (s.decode_passes == 0) s.first_token_seconds = t - start;
      ++s.decode_passes;
      s.decode_seconds += t - last;
    }
    last = t;
    if (pos == 0) first_pass_end = t;
    ++pos;
    const bool keep_going = on_token ? on_token(token, next, ctx) : true;
    if (next == bos || !keep_going) break;
    token = next;
  }
  const double elapsed = last - first_pass_end;
  s.achieved_tok_per_s = pos > 1 && elapsed > 0 ? (pos - 1) / elapsed : 0.0;
  if (stats) *stats = s;
  return Status();
}

}  // namespace pocketlm
