// The C API (api/pocketlm.h): versions and defaults, the config as SessionOptions and a device,
// planning (no session), model info, the session's life (create, open, close) and its errors.
// Everything lives in the caller's memory (placement new); nothing is allocated.
#include "pocketlm/api/pocketlm.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <new>

#include "pocketlm/api/c_error.h"
#include "pocketlm/api/c_session.h"
#include "pocketlm/base/format.h"
#include "pocketlm/format/model_reader.h"
#include "pocketlm/runtime/session.h"
#include "pocketlm/text/utf16.h"

#if defined(POCKETLM_NO_THREAD_LOCAL)
#define POCKETLM_THREAD_LOCAL
#else
#define POCKETLM_THREAD_LOCAL thread_local
#endif

namespace {

using pocketlm::Status;
using pocketlm::StatusCode;

constexpr int kMaxRamTiers = POCKETLM_MAX_TIERS - 1;
constexpr std::size_t kDefaultChatMessageBytes = 1024;
static_assert(POCKETLM_MAX_TIERS == pocketlm::MemoryPlan::kMaxTiers, "pocketlm.h's tier count is the plan's");
static_assert(POCKETLM_ALIGNMENT == pocketlm::Arena::kAlignment, "pocketlm.h's alignment is the arena's");

// The message of the calling thread's last call made without a session (pocketlm_last_error(NULL)).
POCKETLM_THREAD_LOCAL char g_error[Status::kMaxMessage + 32];

void set_message(char* dst, std::size_t cap, const char* message) { pocketlm::format_to(dst, cap, "%s", message); }

pocketlm_status to_c(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return POCKETLM_OK;
    case StatusCode::kInvalidArgument: return POCKETLM_INVALID_ARGUMENT;
    case StatusCode::kNotFound: return POCKETLM_NOT_FOUND;
    case StatusCode::kIoError: return POCKETLM_IO_ERROR;
    case StatusCode::kBadFormat: return POCKETLM_BAD_FORMAT;
    case StatusCode::kOutOfMemory: return POCKETLM_OUT_OF_MEMORY;
    case StatusCode::kUnsupported: return POCKETLM_UNSUPPORTED;
    case StatusCode::kAborted: return POCKETLM_ABORTED;
    case StatusCode::kBadState: return POCKETLM_ERR_STATE;
  }
  return POCKETLM_INVALID_ARGUMENT;
}

// The engine's field names (base/status.h) as the C API's.
constexpr pocketlm::FieldName kCFieldNames[] = {
    {"seq_len", "config.seq_len"}, {"text", "text"},             {"steps", "steps"},
    {"seed", "sampler.seed"},      {"kernels", "config.kernels"}, {"prefill_batch", "config.prefill_batch"},
};

Status check_storage(const pocketlm_storage& s, const char* field) {
  if (!s.read) return Status::error(StatusCode::kInvalidArgument, "%s.read: null (a storage needs a read callback)", field);
  if (s.size == 0)
    return Status::error(StatusCode::kInvalidArgument, "%s.size = 0: the storage '%s' is empty", field,
                         s.name ? s.name : "<storage>");
  return Status();
}

void copy_name(char (&dst)[24], const char* name) { pocketlm::format_to(dst, sizeof dst, "%s", name); }

}  // namespace

namespace pocketlm::api {

pocketlm_status global_status(const Status& st) {
  const Status c = in_c_words(st);
  set_message(g_error, sizeof g_error, c.ok() ? "" : c.message());
  return to_c(st.code());
}

bool align_within(void* memory, std::size_t bytes, std::size_t object_bytes, void** at) {
  const std::uintptr_t p = reinterpret_cast<std::uintptr_t>(memory);
  const std::size_t pad = (POCKETLM_ALIGNMENT - p % POCKETLM_ALIGNMENT) % POCKETLM_ALIGNMENT;
  if (bytes < pad || bytes - pad < object_bytes) return false;
  *at = static_cast<unsigned char*>(memory) + pad;
  return true;
}

Status in_c_words(const Status& st) {
  if (st.ok()) return st;
  char renamed[Status::kMaxMessage];
  rename_field(st.message(), kCFieldNames, static_cast<int>(std::size(kCFieldNames)), renamed, sizeof renamed);
  return Status::error(st.code(), "%s", renamed);
}

void CallbackStorage::set(const pocketlm_storage& s, const char* fallback) {
  s_ = s;
  format_to(name_, sizeof name_, "%s", s.name ? s.name : fallback);
}

Status CallbackStorage::read(std::uint64_t offset, void* dst, std::size_t bytes) {
  if (offset > s_.size || bytes > s_.size - offset)
    return Status::error(StatusCode::kIoError, "%s: read of %zu bytes at offset %llu runs past the end (%llu bytes)",
                         name_, bytes, static_cast<unsigned long long>(offset), static_cast<unsigned long long>(s_.size));
  if (bytes == 0) return Status();
  const int rc = s_.read(s_.ctx, offset, dst, bytes);
  if (rc != 0)
    return Status::error(StatusCode::kIoError, "%s: read of %zu bytes at offset %llu failed (the read callback returned %d)",
                         name_, bytes, static_cast<unsigned long long>(offset), rc);
  return Status();
}

Status read_config(const pocketlm_config* config, pocketlm_config* out) {
  pocketlm_config_defaults(out);
  return read_sized(config, "config", out);
}

Status Configured::configure(const pocketlm_config& config) {
  POCKETLM_TRY(check_storage(config.model, "config.model"));
  model.set(config.model, "<model>");
  own_tokenizer = config.tokenizer.read != nullptr;
  if (own_tokenizer) {
    POCKETLM_TRY(check_storage(config.tokenizer, "config.tokenizer"));
    tokenizer.set(config.tokenizer, "<tokenizer>");
  }
  const int ram = config.ram_tier_count;
  if (ram < 0 || ram > kMaxRamTiers)
    return Status::error(StatusCode::kInvalidArgument, "config.ram_tier_count = %d: must be 0..%d (0 = one unbounded tier)",
                         ram, kMaxRamTiers);
  if (config.seq_len < 0)
    return Status::error(StatusCode::kInvalidArgument, "config.seq_len = %d: must be >= 0 (0 = the model's)", config.seq_len);
  if (config.kernels && !find_kernels(config.kernels))
    return Status::error(StatusCode::kInvalidArgument, "config.kernels = '%s': not a kernel backend of this build or CPU",
                         config.kernels);
  if (config.clock && config.clock_ticks_per_second == 0)
    return Status::error(StatusCode::kInvalidArgument, "config.clock_ticks_per_second = 0: must be positive with a clock");
  KvType kv = KvType::kF32;
  if (config.kv_type && std::strcmp(config.kv_type, "f16") == 0) {
    kv = KvType::kF16;
  } else if (config.kv_type && std::strcmp(config.kv_type, "f32") != 0) {
    return Status::error(StatusCode::kInvalidArgument, "config.kv_type = '%s': must be \"f32\" or \"f16\"", config.kv_type);
  }
  if (config.prefill_batch < 0 || config.prefill_batch > kMaxPrefillBatch)
    return Status::error(StatusCode::kInvalidArgument, "config.prefill_batch = %d: must be 0..%d (0 = the plan's choice)",
                         config.prefill_batch, kMaxPrefillBatch);
  if (config.parallel_for && (config.parallel_threads < 1 || config.parallel_threads > 1024))
    return Status::error(StatusCode::kInvalidArgument, "config.parallel_threads = %d: must be 1..1024 with parallel_for",
                         config.parallel_threads);
  if (config.chat != 0 && config.chat != 1)
    return Status::error(StatusCode::kInvalidArgument, "config.chat = %d: must be 0 or 1", config.chat);
  chat_message_bytes = config.chat ? (config.chat_message_bytes ? config.chat_message_bytes : kDefaultChatMessageBytes) : 0;
  if (chat_message_bytes > (std::size_t{1} << 20))
    return Status::error(StatusCode::kInvalidArgument, "config.chat_message_bytes = %zu: at most 1 MiB",
                         chat_message_bytes);

  device = {};
  device.name = "pocketlm_config";
  device.description = "the tiers of a pocketlm_config";
  device.kernels = config.kernels;
  const int ram_tiers = ram == 0 ? 1 : ram;
  for (int t = 0; t < ram_tiers; ++t) {
    DeviceTier& d = device.tiers[t];
    const char* name = ram == 0 || !config.ram_tiers[t].name ? "ram" : config.ram_tiers[t].name;
    if (!*name) return Status::error(StatusCode::kInvalidArgument, "config.ram_tiers[%d].name: empty", t);
    copy_name(tier_names[t], name);
    d.name = tier_names[t];
    d.storage = false;
    d.capacity = ram == 0 ? 0 : config.ram_tiers[t].capacity;
    d.source = "pocketlm_config";
    d.reserved_source = "";
  }
  DeviceTier& st = device.tiers[ram_tiers];
  copy_name(tier_names[ram_tiers], config.storage_name && *config.storage_name ? config.storage_name : "storage");
  st.name = tier_names[ram_tiers];
  st.storage = true;
  st.capacity = config.storage_capacity;
  st.reserved_bytes = config.storage_reserved;
  st.source = "pocketlm_config";
  st.reserved_source = "pocketlm_config.storage_reserved";
  if (st.capacity && st.reserved_bytes >= st.capacity)
    return Status::error(StatusCode::kInvalidArgument, "config.storage_reserved = %llu: not below config.storage_capacity = %llu",
                         static_cast<unsigned long long>(st.reserved_bytes), static_cast<unsigned long long>(st.capacity));
  device.tier_count = ram_tiers + 1;

  options = SessionOptions();
  options.device = &device;
  options.seq_len = config.seq_len;
  options.clock = config.clock;
  options.clock_ticks_per_second = config.clock ? config.clock_ticks_per_second : 1;
  options.kv = kv;
  options.prefill_batch = config.prefill_batch;
  if (config.stream_block_bytes) options.stream_block_bytes = config.stream_block_bytes;
  if (config.parallel_for) {
    parallel.set(config.parallel_for, config.parallel_ctx, config.parallel_threads);
    options.parallel = &parallel;
  }
  options.chat = config.chat == 1;
  // The rendered message (system block, message, template marks), then the system prompt's copy.
  if (options.chat) options.chat_text_bytes = 3 * chat_message_bytes + kChatTemplateOverheadBytes;
  return Status();
}

Status plan_into(Configured& c, const pocketlm_config& config, SessionPlan* work, pocketlm_memory_plan* out) {
  pocketlm_memory_plan p = {};
  p.size = sizeof p;
  POCKETLM_TRY(plan_session(c.model, c.tokenizer_storage(), c.options, work));
  const MemoryPlan& plan = work->memory;
  p.tier_count = plan.tier_count();
  for (int t = 0; t < plan.tier_count(); ++t) {
    pocketlm_plan_tier& o = p.tiers[t];
    const PlanTier& pt = plan.tier(t);
    format_to(o.name, sizeof o.name, "%s", pt.name);
    o.storage = pt.storage ? 1 : 0;
    o.capacity = pt.capacity;
    o.bytes = pt.storage ? plan.tier_total(t) : plan.arena_bytes(t);
  }
  p.fits = plan.fits() ? 1 : 0;
  p.ram_bytes = plan.total();
  p.storage_bytes_per_token = plan.storage_bytes_per_token();
  p.model_file_bytes = config.model.size;
  p.seq_len = work->seq_len;
  p.prefill_batch = work->prefill_batch;
  POCKETLM_TRY(write_sized(p, "plan", out));
  if (!plan.fits()) return check_plan_fits(c.model.name(), c.options, *work);
  return Status();
}

Status read_sampler(const pocketlm_sampler* sampler, const char* what, SamplerParams* out) {
  pocketlm_sampler s;
  pocketlm_sampler_defaults(&s);
  POCKETLM_TRY(read_sized(sampler, what, &s));
  if (!(s.temperature >= 0.0f) || std::isinf(s.temperature))
    return Status::error(StatusCode::kInvalidArgument, "%s.temperature = %g: must be finite and >= 0", what,
                         static_cast<double>(s.temperature));
  if (!(s.topp >= 0.0f && s.topp <= 1.0f))
    return Status::error(StatusCode::kInvalidArgument, "%s.topp = %g: must be in [0, 1] (0 or 1: top-p off)", what,
                         static_cast<double>(s.topp));
  if (s.seed == 0)
    return Status::error(StatusCode::kInvalidArgument, "%s.seed = 0: must not be 0 (the xorshift state)", what);
  out->temperature = s.temperature;
  out->topp = s.topp;
  out->seed = s.seed;
  return Status();
}

pocketlm_session* session_of(pocketlm_session* s, const char* call, pocketlm_status* status) {
  if (!s) {
    *status = global_status(Status::error(StatusCode::kInvalidArgument, "%s: session: null", call));
    return nullptr;
  }
  if (s->magic != kSessionMagic) {
    *status = global_status(Status::error(StatusCode::kInvalidArgument,
                                          "%s: session: the memory holds no pocketlm session (never created, or reused)", call));
    return nullptr;
  }
  return s;
}

pocketlm_session* open_session(pocketlm_session* session, const char* call, pocketlm_status* status) {
  pocketlm_session* s = session_of(session, call, status);
  if (!s) return nullptr;
  const Status st = s->check_state(call, /*needs_open=*/true);
  if (!st.ok()) {
    *status = s->fail(st);
    return nullptr;
  }
  return s;
}

}  // namespace pocketlm::api

using pocketlm::api::global_status;

pocketlm_status pocketlm_session::fail(const Status& st) {
  const Status c = pocketlm::api::in_c_words(st);
  set_message(error, sizeof error, c.ok() ? "" : c.message());
  return to_c(st.code());
}

Status pocketlm_session::check_state(const char* call, bool needs_open) const {
  using pocketlm::api::SessionState;
  if (busy)
    return Status::error(StatusCode::kBadState, "%s: called from inside this session's token callback", call);
  switch (state) {
    case SessionState::kClosed:
      return Status::error(StatusCode::kBadState, "%s: the session is closed", call);
    case SessionState::kFailed:
      return Status::error(StatusCode::kBadState, "%s: the session's open failed; close it and create another", call);
    case SessionState::kCreated:
      if (needs_open) return Status::error(StatusCode::kBadState, "%s: the session is not open (pocketlm_open first)", call);
      return Status();
    case SessionState::kOpen:
      if (!needs_open) return Status::error(StatusCode::kBadState, "%s: the session is already open", call);
      return Status();
  }
  return Status();
}

extern "C" {

int pocketlm_version(void) { return POCKETLM_VERSION; }

void pocketlm_config_defaults(pocketlm_config* config) {
  if (!config) return;
  std::memset(config, 0, sizeof *config);
  config->size = sizeof *config;
}

void pocketlm_sampler_defaults(pocketlm_sampler* sampler) {
  if (!sampler) return;
  std::memset(sampler, 0, sizeof *sampler);
  sampler->size = sizeof *sampler;
  sampler->temperature = 1.0f;
  sampler->topp = 0.9f;
  sampler->seed = 1;
}

void pocketlm_chat_config_defaults(pocketlm_chat_config* chat) {
  if (!chat) return;
  std::memset(chat, 0, sizeof *chat);
  chat->size = sizeof *chat;
  pocketlm_sampler_defaults(&chat->sampler);
}


pocketlm_status pocketlm_inspect(pocketlm_session* session, const pocketlm_storage* model, pocketlm_model_info* info) {
  pocketlm_status code = POCKETLM_OK;
  pocketlm_session* s = pocketlm::api::session_of(session, "pocketlm_inspect", &code);
  if (!s) return code;
  if (s->state == pocketlm::api::SessionState::kClosed)
    return s->fail(Status::error(StatusCode::kBadState, "pocketlm_inspect: the session is closed"));
  if (!model) return s->fail(Status::error(StatusCode::kInvalidArgument, "model: null"));
  pocketlm_model_info out = {};
  out.size = sizeof out;
  POCKETLM_C_TRY(s, check_storage(*model, "model"));
  pocketlm::api::CallbackStorage storage;
  storage.set(*model, "<model>");
  pocketlm::ModelSpec& spec = s->planned.spec;  // the workspace: an open session keeps its own
  POCKETLM_C_TRY(s, pocketlm::read_model_spec(storage, &spec));
  const pocketlm::ModelConfig& m = spec.config;
  pocketlm::format_to(out.architecture, sizeof out.architecture, "%s", spec.architecture);
  pocketlm::format_to(out.format, sizeof out.format, "%s", pocketlm::format_name(spec.format));
  out.vocab_size = m.vocab_size;
  out.seq_len = m.seq_len;
  out.dim = m.dim;
  out.hidden_dim = m.hidden_dim;
  out.n_layers = m.n_layers;
  out.n_heads = m.n_heads;
  out.n_kv_heads = m.n_kv_heads;
  out.bos_id = m.bos_id;
  out.eos_id = m.eos_id;
  out.has_tokenizer = spec.tokenizer.present ? 1 : 0;
  out.file_bytes = spec.file_bytes;
  return s->fail(pocketlm::api::write_sized(out, "info", info));
}

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

pocketlm_status pocketlm_plan(pocketlm_session* session, const pocketlm_config* config, pocketlm_memory_plan* plan) {
  pocketlm_status code = POCKETLM_OK;
  pocketlm_session* s = pocketlm::api::session_of(session, "pocketlm_plan", &code);
  if (!s) return code;
  // Only before open: an open session's storages and options are never touched.
  POCKETLM_C_TRY(s, s->check_state("pocketlm_plan", /*needs_open=*/false));
  pocketlm_config c;
  POCKETLM_C_TRY(s, pocketlm::api::read_config(config, &c));
  if (!plan) return s->fail(Status::error(StatusCode::kInvalidArgument, "plan: null"));
  POCKETLM_C_TRY(s, s->configured.configure(c));
  return s->fail(pocketlm::api::plan_into(s->configured, c, &s->planned, plan));
}

pocketlm_status pocketlm_open(pocketlm_session* session, const pocketlm_config* config) {
  pocketlm_status code = POCKETLM_OK;
  pocketlm_session* s = pocketlm::api::session_of(session, "pocketlm_open", &code);
  if (!s) return code;
  POCKETLM_C_TRY(s, s->check_state("pocketlm_open", /*needs_open=*/false));
  pocketlm_config c;
  POCKETLM_C_TRY(s, pocketlm::api::read_config(config, &c));
  pocketlm::api::Configured& cf = s->configured;
  POCKETLM_C_TRY(s, cf.configure(c));
  pocketlm_memory_plan plan = {};
  plan.size = sizeof plan;
  POCKETLM_C_TRY(s, pocketlm::api::plan_into(cf, c, &s->planned, &plan));
  for (int t = 0; t < plan.tier_count; ++t) {
    if (plan.tiers[t].storage || plan.tiers[t].bytes == 0) continue;
    if (!c.tier_buffers[t])
      return s->fail(Status::error(StatusCode::kInvalidArgument,
                                   "config.tier_buffers[%d] (%s): null, but the plan needs %llu bytes there (the C API "
                                   "allocates nothing)",
                                   t, plan.tiers[t].name, static_cast<unsigned long long>(plan.tiers[t].bytes)));
    cf.options.tier_buffers[t] = c.tier_buffers[t];
    cf.options.tier_buffer_bytes[t] = c.tier_buffer_bytes[t];
  }
  cf.options.abort = &s->abort;
  // From here a failure leaves a session that cannot be opened again (Session opens once).
  // It opens from the plan just made: what it carves is what the caller's buffers were sized by.
  s->state = pocketlm::api::SessionState::kFailed;
  const Status st = s->session.open(s->planned, cf.model, cf.tokenizer_storage(), cf.options);
  if (st.ok()) s->state = pocketlm::api::SessionState::kOpen;
  return s->fail(st);
}

int pocketlm_seq_len(const pocketlm_session* s) {
  return s && s->magic == pocketlm::api::kSessionMagic && s->state == pocketlm::api::SessionState::kOpen
             ? s->session.seq_len()
             : 0;
}

int pocketlm_vocab_size(const pocketlm_session* s) {
  return pocketlm_seq_len(s) ? s->session.spec().config.vocab_size : 0;
}

int32_t pocketlm_bos_id(const pocketlm_session* s) { return pocketlm_seq_len(s) ? s->session.spec().config.bos_id : -1; }

int32_t pocketlm_eos_id(const pocketlm_session* s) { return pocketlm_seq_len(s) ? s->session.spec().config.eos_id : -1; }

void pocketlm_abort(pocketlm_session* s) {
  if (s && s->magic == pocketlm::api::kSessionMagic) s->abort.store(1, std::memory_order_relaxed);
}

const char* pocketlm_last_error(const pocketlm_session* s) {
  if (!s) return g_error;
  return s->magic == pocketlm::api::kSessionMagic ? s->error : "session: the memory holds no pocketlm session";
}

pocketlm_status pocketlm_close(pocketlm_session* session) {
  pocketlm_status code = POCKETLM_OK;
  pocketlm_session* s = pocketlm::api::session_of(session, "pocketlm_close", &code);
  if (!s) return code;
  if (s->busy)
    return s->fail(Status::error(StatusCode::kBadState, "pocketlm_close: called from inside this session's token callback"));
  if (s->state == pocketlm::api::SessionState::kClosed)
    return s->fail(Status::error(StatusCode::kBadState, "pocketlm_close: the session is already closed"));
  // The engine's objects go; the small header stays, so that a late call is an error, not a crash.
  s->session.~Session();
  s->planned.~SessionPlan();
  s->configured.~Configured();
  s->state = pocketlm::api::SessionState::kClosed;
  return s->fail(Status());
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
