// The C API (api/pocketlm.h) over Session: the caller's storage callbacks become a Storage, its
// tiers a DeviceProfile, its buffers the arena's blocks. Everything lives in the caller's
// memory (placement new); nothing is allocated.
#include "pocketlm/api/pocketlm.h"
#include "pocketlm/api/c_error.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <new>

#include "pocketlm/runtime/session.h"
#include "pocketlm/text/utf16.h"

namespace {

using pocketlm::Status;
using pocketlm::StatusCode;

constexpr int kMaxRamTiers = POCKETLM_MAX_TIERS - 1;
static_assert(POCKETLM_MAX_TIERS == pocketlm::MemoryPlan::kMaxTiers, "pocketlm.h's tier count is the plan's");
static_assert(POCKETLM_ALIGNMENT == pocketlm::Arena::kAlignment, "pocketlm.h's alignment is the arena's");

// The caller's read callback as a Storage: bounds checked here, so a callback only ever sees
// ranges inside `size`.
class CallbackStorage final : public pocketlm::Storage {
 public:
  void set(const pocketlm_storage& s, const char* fallback) {
    s_ = s;
    name_ = s.name ? s.name : fallback;
  }
  const char* name() const override { return name_; }
  std::uint64_t size() const override { return s_.size; }
  Status read(std::uint64_t offset, void* dst, std::size_t bytes) override {
    if (offset > s_.size || bytes > s_.size - offset)
      return Status::error(StatusCode::kIoError, "%s: read of %zu bytes at offset %llu runs past the end (%llu bytes)",
                           name_, bytes, static_cast<unsigned long long>(offset),
                           static_cast<unsigned long long>(s_.size));
    if (bytes == 0) return Status();
    const int rc = s_.read(s_.ctx, offset, dst, bytes);
    if (rc != 0)
      return Status::error(StatusCode::kIoError, "%s: read of %zu bytes at offset %llu failed (the read callback returned %d)",
                           name_, bytes, static_cast<unsigned long long>(offset), rc);
    return Status();
  }

 private:
  pocketlm_storage s_ = {};
  const char* name_ = "<storage>";
};

// The message of a call made without a session (pocketlm_last_error(NULL)).
char g_error[Status::kMaxMessage];

void set_message(char* dst, const char* message) {
  std::size_t n = std::strlen(message);
  if (n >= Status::kMaxMessage) n = Status::kMaxMessage - 1;
  std::memcpy(dst, message, n);
  dst[n] = '\0';
}

pocketlm_status to_c(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return POCKETLM_OK;
    case StatusCode::kInvalidArgument: return POCKETLM_INVALID_ARGUMENT;
    case StatusCode::kNotFound: return POCKETLM_NOT_FOUND;
    case StatusCode::kIoError: return POCKETLM_IO_ERROR;
    case StatusCode::kBadFormat: return POCKETLM_BAD_FORMAT;
    case StatusCode::kOutOfMemory: return POCKETLM_OUT_OF_MEMORY;
    case StatusCode::kUnsupported: return POCKETLM_UNSUPPORTED;
  }
  return POCKETLM_INVALID_ARGUMENT;
}

}  // namespace

namespace pocketlm::api {
pocketlm_status global_status(const Status& st) {
  set_message(g_error, st.ok() ? "" : st.message());
  return to_c(st.code());
}

bool align_within(void* memory, std::size_t bytes, std::size_t object_bytes, void** at) {
  const std::uintptr_t p = reinterpret_cast<std::uintptr_t>(memory);
  const std::size_t pad = (POCKETLM_ALIGNMENT - p % POCKETLM_ALIGNMENT) % POCKETLM_ALIGNMENT;
  if (bytes < pad || bytes - pad < object_bytes) return false;
  *at = static_cast<unsigned char*>(memory) + pad;
  return true;
}
}  // namespace pocketlm::api

namespace {
using pocketlm::api::global_status;
}  // namespace

struct pocketlm_session {
  pocketlm::Session session;
  CallbackStorage model;
  CallbackStorage tokenizer;
  pocketlm::DeviceProfile device = {};
  char tier_names[POCKETLM_MAX_TIERS][24] = {};
  pocketlm::SessionOptions options;
  // pocketlm_plan's results (the session keeps its own once open).
  pocketlm::ModelSpec plan_spec;
  pocketlm::MemoryPlan plan;
  pocketlm::WeightPlacement placement;
  // generate(): the caller's callback and how many times it was called.
  pocketlm_token_fn on_token = nullptr;
  void* on_token_ctx = nullptr;
  int generated = 0;
  char error[Status::kMaxMessage] = {};

  pocketlm_status fail(const Status& st) {
    set_message(error, st.ok() ? "" : st.message());
    return to_c(st.code());
  }
  // The config as the session's options and device; the storages set from it.
  Status configure(const pocketlm_config* config);
  Status run_plan(const pocketlm_config* config, pocketlm_memory_plan* out);
};

namespace {

Status check_storage(const pocketlm_storage& s, const char* field) {
  if (!s.read) return Status::error(StatusCode::kInvalidArgument, "config.%s.read: null (a storage needs a read callback)", field);
  if (s.size == 0)
    return Status::error(StatusCode::kInvalidArgument, "config.%s.size = 0: the storage '%s' is empty", field,
                         s.name ? s.name : "<storage>");
  return Status();
}

void copy_name(char (&dst)[24], const char* name) {
  std::size_t n = std::strlen(name);
  if (n >= sizeof dst) n = sizeof dst - 1;
  std::memcpy(dst, name, n);
  dst[n] = '\0';
}

}  // namespace

Status pocketlm_session::configure(const pocketlm_config* config) {
  if (!config) return Status::error(StatusCode::kInvalidArgument, "config: null");
  POCKETLM_TRY(check_storage(config->model, "model"));
  model.set(config->model, "<model>");
  const bool own_tokenizer = config->tokenizer.read != nullptr;
  if (own_tokenizer) {
    POCKETLM_TRY(check_storage(config->tokenizer, "tokenizer"));
    tokenizer.set(config->tokenizer, "<tokenizer>");
  }
  const int ram = config->ram_tier_count;
  if (ram < 0 || ram > kMaxRamTiers)
    return Status::error(StatusCode::kInvalidArgument, "config.ram_tier_count = %d: must be 0..%d (0 = one unbounded tier)",
                         ram, kMaxRamTiers);
  if (config->seq_len < 0)
    return Status::error(StatusCode::kInvalidArgument, "config.seq_len = %d: must be >= 0 (0 = the model's)",
                         config->seq_len);
  if (config->kernels && !pocketlm::find_kernels(config->kernels))
    return Status::error(StatusCode::kInvalidArgument, "config.kernels = '%s': not a kernel backend of this build or CPU",
                         config->kernels);
  if (config->clock && config->clock_ticks_per_second == 0)
    return Status::error(StatusCode::kInvalidArgument, "config.clock_ticks_per_second = 0: must be positive with a clock");

  device = {};
  device.name = "pocketlm_config";
  device.description = "the tiers of a pocketlm_config";
  device.kernels = config->kernels;
  const int ram_tiers = ram == 0 ? 1 : ram;
  for (int t = 0; t < ram_tiers; ++t) {
    pocketlm::DeviceTier& d = device.tiers[t];
    const char* name = ram == 0 || !config->ram_tiers[t].name ? "ram" : config->ram_tiers[t].name;
    if (!*name) return Status::error(StatusCode::kInvalidArgument, "config.ram_tiers[%d].name: empty", t);
    copy_name(tier_names[t], name);
    d.name = tier_names[t];
    d.storage = false;
    d.capacity = ram == 0 ? 0 : config->ram_tiers[t].capacity;
    d.source = "pocketlm_config";
    d.reserved_source = "";
  }
  pocketlm::DeviceTier& st = device.tiers[ram_tiers];
  copy_name(tier_names[ram_tiers], config->storage_name && *config->storage_name ? config->storage_name : "storage");
  st.name = tier_names[ram_tiers];
  st.storage = true;
  st.capacity = config->storage_capacity;
  st.reserved_bytes = config->storage_reserved;
  st.source = "pocketlm_config";
  st.reserved_source = "pocketlm_config.storage_reserved";
  if (st.capacity && st.reserved_bytes >= st.capacity)
    return Status::error(StatusCode::kInvalidArgument,
                         "config.storage_reserved = %llu: not below config.storage_capacity = %llu",
                         static_cast<unsigned long long>(st.reserved_bytes), static_cast<unsigned long long>(st.capacity));
  device.tier_count = ram_tiers + 1;

  options = pocketlm::SessionOptions();
  options.device = &device;
  options.seq_len = config->seq_len;
  options.clock = config->clock;
  options.clock_ticks_per_second = config->clock ? config->clock_ticks_per_second : 1;
  return Status();
}

Status pocketlm_session::run_plan(const pocketlm_config* config, pocketlm_memory_plan* out) {
  if (!out) return Status::error(StatusCode::kInvalidArgument, "plan: null");
  std::memset(out, 0, sizeof *out);
  POCKETLM_TRY(configure(config));
  pocketlm::Storage* tok = config->tokenizer.read ? &tokenizer : nullptr;
  POCKETLM_TRY(pocketlm::Session::plan(model, tok, options, &plan_spec, &plan, &placement));
  out->tier_count = plan.tier_count();
  for (int t = 0; t < plan.tier_count(); ++t) {
    pocketlm_plan_tier& o = out->tiers[t];
    const pocketlm::PlanTier& p = plan.tier(t);
    std::memcpy(o.name, p.name, sizeof o.name);
    o.name[sizeof o.name - 1] = '\0';
    o.storage = p.storage ? 1 : 0;
    o.capacity = p.capacity;
    if (p.storage) {
      for (int r = 0; r < plan.size(); ++r)
        if (plan.region(r).tier == t) o.bytes += plan.region(r).bytes;
    } else {
      o.bytes = plan.arena_bytes(t);
    }
  }
  out->fits = plan.fits() ? 1 : 0;
  out->ram_bytes = plan.total();
  out->storage_bytes_per_token = plan.storage_bytes_per_token();
  out->model_file_bytes = config->model.size;
  out->seq_len = config->seq_len > 0 && config->seq_len < plan_spec.config.seq_len ? config->seq_len
                                                                                  : plan_spec.config.seq_len;
  if (!plan.fits()) return pocketlm::Session::check_fits(model.name(), options, plan, placement);
  return Status();
}

extern "C" {

size_t pocketlm_session_bytes(void) { return sizeof(pocketlm_session) + POCKETLM_ALIGNMENT - 1; }

pocketlm_status pocketlm_create(void* memory, size_t bytes, pocketlm_session** out) {
  if (!out) return global_status(Status::error(StatusCode::kInvalidArgument, "pocketlm_create: out: null"));
  *out = nullptr;
  if (!memory) return global_status(Status::error(StatusCode::kInvalidArgument, "pocketlm_create: memory: null"));
  void* at = nullptr;
  if (!pocketlm::api::align_within(memory, bytes, sizeof(pocketlm_session), &at))
    return global_status(Status::error(StatusCode::kOutOfMemory,
                                       "pocketlm_create: bytes = %zu: a session needs %zu (pocketlm_session_bytes())",
                                       bytes, pocketlm_session_bytes()));
  *out = new (at) pocketlm_session();
  return global_status(Status());
}

pocketlm_status pocketlm_plan(pocketlm_session* s, const pocketlm_config* config, pocketlm_memory_plan* plan) {
  if (!s) return global_status(Status::error(StatusCode::kInvalidArgument, "pocketlm_plan: session: null"));
  return s->fail(s->run_plan(config, plan));
}

pocketlm_status pocketlm_open(pocketlm_session* s, const pocketlm_config* config) {
  if (!s) return global_status(Status::error(StatusCode::kInvalidArgument, "pocketlm_open: session: null"));
  if (s->session.ready())
    return s->fail(Status::error(StatusCode::kInvalidArgument, "pocketlm_open: the session is already open"));
  pocketlm_memory_plan plan;
  const Status planned = s->run_plan(config, &plan);
  if (!planned.ok()) return s->fail(planned);
  for (int t = 0; t < plan.tier_count; ++t) {
    if (plan.tiers[t].storage) continue;
    if (plan.tiers[t].bytes == 0) continue;
    if (!config->tier_buffers[t])
      return s->fail(Status::error(StatusCode::kInvalidArgument,
                                   "config.tier_buffers[%d] (%s): null, but the plan needs %llu bytes there (the C API "
                                   "allocates nothing)",
                                   t, plan.tiers[t].name, static_cast<unsigned long long>(plan.tiers[t].bytes)));
    s->options.tier_buffers[t] = config->tier_buffers[t];
    s->options.tier_buffer_bytes[t] = config->tier_buffer_bytes[t];
  }
  return s->fail(s->session.open(s->model, config->tokenizer.read ? &s->tokenizer : nullptr, s->options));
}

pocketlm_status pocketlm_prompt_capacity(const pocketlm_session* s, size_t len, size_t* entries) {
  if (!s) return global_status(Status::error(StatusCode::kInvalidArgument, "pocketlm_prompt_capacity: session: null"));
  pocketlm_session* m = const_cast<pocketlm_session*>(s);  // the message buffer only
  if (!entries) return m->fail(Status::error(StatusCode::kInvalidArgument, "pocketlm_prompt_capacity: entries: null"));
  if (!s->session.ready())
    return m->fail(Status::error(StatusCode::kInvalidArgument, "pocketlm_prompt_capacity: the session is not open"));
  return m->fail(s->session.prompt_capacity(len, entries));
}

pocketlm_status pocketlm_encode(const pocketlm_session* s, const char* text, size_t len, int32_t* tokens,
                                size_t capacity, int* n_tokens) {
  if (!s) return global_status(Status::error(StatusCode::kInvalidArgument, "pocketlm_encode: session: null"));
  pocketlm_session* m = const_cast<pocketlm_session*>(s);  // the message buffer only
  if (!s->session.ready()) return m->fail(Status::error(StatusCode::kInvalidArgument, "pocketlm_encode: the session is not open"));
  if (!tokens || !n_tokens || (!text && len))
    return m->fail(Status::error(StatusCode::kInvalidArgument, "pocketlm_encode: %s: null",
                                 !tokens ? "tokens" : !n_tokens ? "n_tokens" : "text"));
  return m->fail(s->session.encode(text ? text : "", len, tokens, capacity, n_tokens));
}

namespace {
bool forward_token(std::int32_t prev, std::int32_t next, void* ctx) {
  pocketlm_session* s = static_cast<pocketlm_session*>(ctx);
  s->generated++;
  const pocketlm::Piece p = s->session.tokenizer().decode(prev, next);
  return s->on_token(s->on_token_ctx, next, reinterpret_cast<const char*>(p.data), p.size) == 0;
}
}  // namespace

pocketlm_status pocketlm_generate(pocketlm_session* s, const int32_t* prompt, int n_prompt, int steps,
                                  const pocketlm_sampler* sampler, pocketlm_token_fn on_token, void* ctx,
                                  pocketlm_stats* stats) {
  if (!s) return global_status(Status::error(StatusCode::kInvalidArgument, "pocketlm_generate: session: null"));
  if (stats) std::memset(stats, 0, sizeof *stats);
  if (!s->session.ready()) return s->fail(Status::error(StatusCode::kInvalidArgument, "pocketlm_generate: the session is not open"));
  if (!prompt || !sampler || !on_token)
    return s->fail(Status::error(StatusCode::kInvalidArgument, "pocketlm_generate: %s: null",
                                 !prompt ? "prompt" : !sampler ? "sampler" : "on_token"));
  if (!(sampler->temperature >= 0.0f) || std::isinf(sampler->temperature))
    return s->fail(Status::error(StatusCode::kInvalidArgument, "sampler.temperature = %g: must be finite and >= 0",
                                 static_cast<double>(sampler->temperature)));
  if (std::isnan(sampler->topp))
    return s->fail(Status::error(StatusCode::kInvalidArgument, "sampler.topp = nan: must be a number (<= 0 or >= 1: off)"));
  if (sampler->seed == 0)
    return s->fail(Status::error(StatusCode::kInvalidArgument, "sampler.seed = 0: must not be 0 (the xorshift state)"));
  pocketlm::SamplerParams params;
  params.temperature = sampler->temperature;
  params.topp = sampler->topp;
  params.seed = sampler->seed;
  s->on_token = on_token;
  s->on_token_ctx = ctx;
  s->generated = 0;
  pocketlm::GenerateStats g;
  const Status st = s->session.generate(prompt, n_prompt, steps, params, forward_token, s, &g);
  if (stats) {
    stats->tokens = s->generated;
    stats->prompt_tokens = g.prompt_tokens;
    stats->prefill_passes = g.prefill_passes;
    stats->decode_passes = g.decode_passes;
    stats->prefill_seconds = g.prefill_seconds;
    stats->decode_seconds = g.decode_seconds;
    stats->storage_bytes = g.storage_bytes;
    stats->storage_seeks = g.storage_seeks;
    stats->prefill_storage_bytes = g.prefill_storage_bytes;
    stats->prefill_storage_seeks = g.prefill_storage_seeks;
  }
  return s->fail(st);
}

int pocketlm_seq_len(const pocketlm_session* s) { return s && s->session.ready() ? s->session.seq_len() : 0; }

int pocketlm_vocab_size(const pocketlm_session* s) {
  return s && s->session.ready() ? s->session.spec().config.vocab_size : 0;
}

const char* pocketlm_last_error(const pocketlm_session* s) { return s ? s->error : g_error; }

void pocketlm_close(pocketlm_session* s) {
  if (s) s->~pocketlm_session();
}

pocketlm_status pocketlm_utf16le_to_utf8(const void* in, size_t in_bytes, char* out, size_t capacity,
                                         size_t* out_bytes) {
  if (out_bytes) *out_bytes = 0;
  if ((!in && in_bytes) || !out || capacity == 0)
    return global_status(Status::error(StatusCode::kInvalidArgument, "pocketlm_utf16le_to_utf8: %s",
                                       !out ? "out: null" : capacity == 0 ? "capacity = 0: no room for the NUL"
                                                                          : "in: null"));
  std::size_t n = 0;
  const Status st = pocketlm::utf16le_to_utf8(static_cast<const unsigned char*>(in), in_bytes, out, capacity - 1, &n);
  out[n] = '\0';
  if (out_bytes) *out_bytes = n;
  return global_status(st);
}

}  // extern "C"
