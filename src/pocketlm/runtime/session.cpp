#include "pocketlm/runtime/session.h"

#include <chrono>
#include <cstdint>
#include <new>

#include "pocketlm/base/byte_size.h"
#include "pocketlm/format/llama2c_reader.h"
#include "pocketlm/runtime/session_plan.h"

namespace pocketlm {

namespace {

double now_seconds() {
  using Clock = std::chrono::steady_clock;
  return std::chrono::duration<double>(Clock::now().time_since_epoch()).count();
}

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

}  // namespace

Session::~Session() { delete pool_; }

Status Session::carve_all(const ModelSpec& spec, int seq_len, const Kernels& kernels, std::uint64_t piece_bytes,
                          std::size_t chunk_bytes, Arena& arena, Transformer* model, Tokenizer* tokenizer,
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
  POCKETLM_TRY(read_llama2c_spec(model, spec));
  // Before any size below is taken as a size_t (32-bit hosts: a tensor of 4 GiB or more).
  POCKETLM_TRY(check_tensors_addressable(model.name(), *spec, SIZE_MAX));
  if (options.seq_len < 0 || options.seq_len > spec->config.seq_len)
    return Status::error(StatusCode::kInvalidArgument, "--seq-len: %d is outside [1, %d] (the model's seq_len)",
                         options.seq_len, spec->config.seq_len);
  if (options.threads < 1 || options.threads > 256)
    return Status::error(StatusCode::kInvalidArgument, "--threads: %d is outside [1, 256]", options.threads);
  if (options.io_chunk_bytes == 0)
    return Status::error(StatusCode::kInvalidArgument, "io chunk: 0 bytes; reads need a positive chunk size");
  const int seq_len = effective_seq_len(*spec, options);
  std::uint64_t piece_bytes = 0;
  std::size_t chunk = options.io_chunk_bytes;
  if (tokenizer) POCKETLM_TRY(tokenizer_sizes(*tokenizer, *spec, options, &piece_bytes, &chunk));
  *plan = MemoryPlan();
  describe_session_regions(*spec, seq_len, chunk, plan);
  Arena measuring;
  measuring.init_measuring(plan);
  Transformer t;
  Tokenizer tok;
  Sampler sampler;
  unsigned char* buffer = nullptr;
  POCKETLM_TRY(carve_all(*spec, seq_len, kernels_of(options), piece_bytes, chunk, measuring, &t, &tok,
                         &sampler, &buffer));
  plan->add(kPaddingRegion, measuring.padding(), "");
  plan->set_budget(options.budget_bytes);
  return Status();
}

Status Session::open(Storage& model, Storage& tokenizer, const SessionOptions& options) {
  ModelSpec spec;
  POCKETLM_TRY(plan(model, &tokenizer, options, &spec, &plan_));
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
  POCKETLM_TRY(tokenizer_sizes(tokenizer, spec, options, &piece_bytes, &chunk));
  unsigned char* buffer = nullptr;
  kernels_ = &kernels_of(options);
  POCKETLM_TRY(carve_all(spec, seq_len, *kernels_, piece_bytes, chunk, arena_, &model_, &tokenizer_,
                         &sampler_, &buffer));
  // The tokenizer is small and its errors are common: check it before reading the weights.
  POCKETLM_TRY(tokenizer_.load(tokenizer, buffer, chunk));
  POCKETLM_TRY(model_.load(model, options.io_chunk_bytes));
  if (options.threads > 1) {
    pool_ = new (std::nothrow) ThreadPool(options.threads);
    if (!pool_) return Status::error(StatusCode::kOutOfMemory, "threads: cannot create %d workers", options.threads);
    model_.set_parallel(pool_);
  }
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
  const std::int32_t vocab = spec().config.vocab_size;
  if (steps < 1 || steps > seq_len())
    return Status::error(StatusCode::kInvalidArgument, "-n: steps = %d is outside [1, %d] (seq_len)", steps,
                         seq_len());
  if (n_prompt < 1) return Status::error(StatusCode::kInvalidArgument, "prompt: at least one token (BOS) is needed");
  for (int i = 0; i < n_prompt; ++i)
    if (prompt[i] < 0 || prompt[i] >= vocab)
      return Status::error(StatusCode::kInvalidArgument, "prompt: token %d = %d is outside [0, %d)", i, prompt[i],
                           vocab);
  if (params.seed == 0)
    return Status::error(StatusCode::kInvalidArgument, "-s: seed 0 would stall the xorshift generator");
  sampler_.configure(params, *kernels_);

  GenerateStats s;
  s.prompt_tokens = n_prompt;
  const double start = now_seconds();
  double last = start, first_pass_end = start;
  std::int32_t token = prompt[0];
  int pos = 0;
  while (pos < steps) {
    float* logits = model_.forward(token, pos);
    const bool forced = pos < n_prompt - 1;
    const std::int32_t next = forced ? prompt[pos + 1] : sampler_.sample(logits);
    const double t = now_seconds();
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
    if (next == kBosToken || !keep_going) break;
    token = next;
  }
  const double elapsed = last - first_pass_end;
  s.achieved_tok_per_s = pos > 1 && elapsed > 0 ? (pos - 1) / elapsed : 0.0;
  if (stats) *stats = s;
  return Status();
}

}  // namespace pocketlm
