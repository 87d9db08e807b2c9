// The C API's session object (api/pocketlm.h) and what its files share: the caller's storage
// callbacks as a Storage, its parallel_for as a Parallel, its config as SessionOptions and a
// DeviceProfile, and the state machine (created -> open -> closed) every call checks first.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "pocketlm/api/c_error.h"
#include "pocketlm/api/pocketlm.h"
#include "pocketlm/base/parallel.h"
#include "pocketlm/runtime/session.h"
#include "pocketlm/text/chat_template.h"

namespace pocketlm::api {

// The caller's read callback as a Storage: bounds checked here, so a callback only ever sees
// ranges inside `size`. The name is copied (the caller's string may not outlive the call).
class CallbackStorage final : public Storage {
 public:
  void set(const pocketlm_storage& s, const char* fallback);
  const char* name() const override { return name_; }
  std::uint64_t size() const override { return s_.size; }
  Status read(std::uint64_t offset, void* dst, std::size_t bytes) override;

 private:
  pocketlm_storage s_ = {};
  char name_[64] = "<storage>";
};

// config.parallel_for as the engine's Parallel.
class CallbackParallel final : public Parallel {
 public:
  void set(pocketlm_parallel_fn fn, void* ctx, int workers) {
    fn_ = fn;
    ctx_ = ctx;
    workers_ = workers;
  }
  int workers() const override { return workers_; }
  void run(int n, void (*fn)(void* ctx, int i), void* ctx) override { fn_(ctx_, n, fn, ctx); }

 private:
  pocketlm_parallel_fn fn_ = nullptr;
  void* ctx_ = nullptr;
  int workers_ = 1;
};

// A config read as the caller's struct size allows (api/pocketlm.h, Growth): fields past
// config->size keep their defaults.
Status read_config(const pocketlm_config* config, pocketlm_config* out);

// Everything a config becomes: the storages, the tiers as a device, the options. Planning uses
// one of its own; an open session keeps the one it opened with.
struct Configured {
  CallbackStorage model;
  CallbackStorage tokenizer;
  bool own_tokenizer = false;
  DeviceProfile device = {};
  char tier_names[POCKETLM_MAX_TIERS][24] = {};
  CallbackParallel parallel;
  SessionOptions options;
  std::size_t chat_message_bytes = 0;

  Status configure(const pocketlm_config& config);
  Storage* tokenizer_storage() { return own_tokenizer ? &tokenizer : nullptr; }
};

// The plan of a configured config into *work (the session's memory, not the stack: a
// firmware's stack is a few KiB) and the caller's struct (its size honoured).
Status plan_into(Configured& c, const pocketlm_config& config, SessionPlan* work, pocketlm_memory_plan* out);

// Copies min(user_size, sizeof(T)) bytes of `src` into *dst (which holds T's defaults) and keeps
// the size field as sizeof(T): the Growth rule of api/pocketlm.h for a struct read.
template <typename T>
Status read_sized(const T* src, const char* what, T* dst) {
  if (!src) return Status::error(StatusCode::kInvalidArgument, "%s: null", what);
  const std::uint32_t size = src->size;
  if (size < sizeof(std::uint32_t) + 1)
    return Status::error(StatusCode::kInvalidArgument, "%s->size = %u: set it to sizeof the struct (the *_defaults() call does)",
                         what, static_cast<unsigned>(size));
  std::memcpy(dst, src, size < sizeof(T) ? size : sizeof(T));
  dst->size = static_cast<std::uint32_t>(sizeof(T));
  return Status();
}
// Writes *src into the caller's struct, as many bytes as its size says (its size field kept).
template <typename T>
Status write_sized(const T& src, const char* what, T* dst) {
  if (!dst) return Status::error(StatusCode::kInvalidArgument, "%s: null", what);
  const std::uint32_t size = dst->size;
  if (size < sizeof(std::uint32_t) + 1)
    return Status::error(StatusCode::kInvalidArgument, "%s->size = %u: set it to sizeof the struct", what,
                         static_cast<unsigned>(size));
  std::memcpy(reinterpret_cast<unsigned char*>(dst) + sizeof(std::uint32_t),
              reinterpret_cast<const unsigned char*>(&src) + sizeof(std::uint32_t),
              (size < sizeof(T) ? size : sizeof(T)) - sizeof(std::uint32_t));
  return Status();
}

// The engine's names of a caller's values as the C API's fields (base/status.h).
Status in_c_words(const Status& st);

// The sampler as SamplerParams; errors name sampler.* (what is the name of the struct).
Status read_sampler(const pocketlm_sampler* sampler, const char* what, SamplerParams* out);

enum class SessionState : std::uint32_t { kCreated, kOpen, kFailed, kClosed };
inline constexpr std::uint32_t kSessionMagic = 0x506c6d31;  // "Plm1"

}  // namespace pocketlm::api

struct pocketlm_session {
  std::uint32_t magic = pocketlm::api::kSessionMagic;
  pocketlm::api::SessionState state = pocketlm::api::SessionState::kCreated;
  bool busy = false;            // inside generate, decode or a chat turn (its callback may call in)
  std::atomic<int> abort{0};    // pocketlm_abort()
  char error[pocketlm::Status::kMaxMessage + 32] = {};
  // Destroyed by close; until open it is only constructed.
  pocketlm::api::Configured configured;
  pocketlm::SessionPlan planned;
  pocketlm::Session session;
  // generate() and chat turns: the caller's callback and how many times it was called.
  pocketlm_token_fn on_token = nullptr;
  void* on_token_ctx = nullptr;
  int generated = 0;
  // Chat: the conversation's settings (the system prompt copied into the chat text buffer).
  pocketlm::ChatTemplate chat_template = pocketlm::ChatTemplate::kNone;
  int chat_max_reply = 0;
  std::size_t system_len = 0;
  int chat_sent = 0;
  bool chat_begun = false;

  pocketlm_status fail(const pocketlm::Status& st);
  // Ok when the session is in one of the states the call allows, else ERR_STATE naming it.
  pocketlm::Status check_state(const char* call, bool needs_open) const;
};

// Returns s->fail(st) from the calling C function when st is an error.
#define POCKETLM_C_TRY(s, expr)                         \
  do {                                                  \
    const ::pocketlm::Status pocketlm_c_st_ = (expr);   \
    if (!pocketlm_c_st_.ok()) return (s)->fail(pocketlm_c_st_); \
  } while (0)

namespace pocketlm::api {
// Marks the session busy for one call that runs the model (a callback that calls back in is
// refused), and uses up an abort request when the call ends in one.
class BusyScope {
 public:
  explicit BusyScope(pocketlm_session* s) : s_(s) { s_->busy = true; }
  ~BusyScope() { s_->busy = false; }
  BusyScope(const BusyScope&) = delete;
  BusyScope& operator=(const BusyScope&) = delete;
  Status finish(const Status& st) {
    if (st.code() == StatusCode::kAborted) s_->abort.store(0, std::memory_order_relaxed);
    return st;
  }

 private:
  pocketlm_session* s_;
};

// The piece a token callback receives for `next` after `prev`: llama2.c's decode, empty for BOS
// and EOS (a sampled end is reported, but has no text).
void piece_of(const pocketlm_session* s, std::int32_t prev, std::int32_t next, const char** piece, std::size_t* len);

// The session behind a pointer the caller gave: null when it is not one (the thread's error
// then says so, and *status is the code to return).
pocketlm_session* session_of(pocketlm_session* s, const char* call, pocketlm_status* status);
// session_of() of an open session: otherwise null, the session's error saying why (ERR_STATE).
pocketlm_session* open_session(pocketlm_session* s, const char* call, pocketlm_status* status);
}  // namespace pocketlm::api
