// The C API's chat (api/pocketlm.h): pocketlm chat's conversation (text/chat_template.h, the
// Session's reply reserve and context-full policy), its message rendered and encoded in the
// session's arena (SessionOptions::chat_text_bytes), so a turn allocates nothing.
#include <cstring>

#include "pocketlm/api/c_session.h"
#include "pocketlm/api/pocketlm.h"

using pocketlm::Status;
using pocketlm::StatusCode;

namespace {

// The chat text buffer (c_session.h): the rendered message first, the system prompt's copy last.
struct ChatBuffers {
  char* render = nullptr;
  std::size_t render_bytes = 0;
  char* system = nullptr;
  std::int32_t* tokens = nullptr;
  std::size_t token_entries = 0;
};

ChatBuffers chat_buffers(const pocketlm_session* s) {
  ChatBuffers b;
  std::size_t text_bytes = 0;
  char* text = s->session.chat_text(&text_bytes);
  const std::size_t m = s->configured.chat_message_bytes;
  if (!text || text_bytes < 3 * m) return b;
  b.render = text;
  b.render_bytes = text_bytes - m;
  b.system = text + b.render_bytes;
  b.tokens = s->session.chat_text_tokens(&b.token_entries);
  return b;
}

bool chat_token(std::int32_t prev, std::int32_t next, void* ctx) {
  pocketlm_session* s = static_cast<pocketlm_session*>(ctx);
  s->generated++;
  if (!s->on_token) return true;
  const char* piece = nullptr;
  std::size_t len = 0;
  pocketlm::api::piece_of(s, prev, next, &piece, &len);
  return s->on_token(s->on_token_ctx, next, piece, len) == 0;
}

pocketlm_session* chat_session(pocketlm_session* session, const char* call, pocketlm_status* code) {
  pocketlm_session* s = pocketlm::api::open_session(session, call, code);
  if (!s) return nullptr;
  if (!chat_buffers(s).render) {
    *code = s->fail(Status::error(StatusCode::kBadState, "%s: the session was opened without config.chat = 1", call));
    return nullptr;
  }
  return s;
}

}  // namespace

extern "C" {

pocketlm_status pocketlm_chat_begin(pocketlm_session* session, const pocketlm_chat_config* chat) {
  pocketlm_status code = POCKETLM_OK;
  pocketlm_session* s = chat_session(session, "pocketlm_chat_begin", &code);
  if (!s) return code;
  pocketlm_chat_config c;
  pocketlm_chat_config_defaults(&c);
  POCKETLM_C_TRY(s, pocketlm::api::read_sized(chat, "chat", &c));
  pocketlm::SamplerParams params;
  POCKETLM_C_TRY(s, pocketlm::api::read_sampler(&c.sampler, "chat.sampler", &params));
  pocketlm::ChatTemplate t = pocketlm::ChatTemplate::kNone;
  if (c.chat_template && !pocketlm::find_chat_template(c.chat_template, &t))
    return s->fail(Status::error(StatusCode::kInvalidArgument, "chat.chat_template = '%s': must be \"none\" or \"llama2\"",
                                 c.chat_template));
  if (c.max_reply < 0)
    return s->fail(Status::error(StatusCode::kInvalidArgument, "chat.max_reply = %d: must be >= 0 (0 = no limit)",
                                 c.max_reply));
  const ChatBuffers b = chat_buffers(s);
  const std::size_t m = s->configured.chat_message_bytes;
  const std::size_t system_len = c.system_prompt ? std::strlen(c.system_prompt) : 0;
  if (system_len > m)
    return s->fail(Status::error(StatusCode::kInvalidArgument,
                                 "chat.system_prompt: %zu bytes is more than config.chat_message_bytes = %zu", system_len, m));
  if (system_len > 0 && t != pocketlm::ChatTemplate::kLlama2)
    return s->fail(Status::error(StatusCode::kInvalidArgument,
                                 "chat.system_prompt: needs chat.chat_template = \"llama2\" (\"none\" has no place for one)"));
  POCKETLM_C_TRY(s, s->session.chat_begin(params));
  if (system_len) std::memcpy(b.system, c.system_prompt, system_len);
  s->system_len = system_len;
  s->chat_template = t;
  s->chat_max_reply = c.max_reply;
  s->chat_sent = 0;
  s->chat_begun = true;
  return s->fail(Status());
}

pocketlm_status pocketlm_chat_turn(pocketlm_session* session, const char* message, size_t len, pocketlm_token_fn on_token,
                                   void* ctx, pocketlm_chat_stats* stats) {
  pocketlm_status code = POCKETLM_OK;
  pocketlm_session* s = chat_session(session, "pocketlm_chat_turn", &code);
  if (!s) return code;
  if (!s->chat_begun || !s->session.chat_active())
    return s->fail(Status::error(StatusCode::kBadState,
                                 "pocketlm_chat_turn: no conversation (pocketlm_chat_begin first; generate, decode or a "
                                 "failed turn end one)"));
  if (!message && len) return s->fail(Status::error(StatusCode::kInvalidArgument, "pocketlm_chat_turn: message: null"));
  pocketlm_chat_stats out = {};
  out.size = sizeof out;
  if (stats) POCKETLM_C_TRY(s, pocketlm::api::write_sized(out, "stats", stats));
  const std::size_t m = s->configured.chat_message_bytes;
  if (len > m)
    return s->fail(Status::error(StatusCode::kInvalidArgument,
                                 "message: %zu bytes is more than config.chat_message_bytes = %zu; not sent", len, m));
  const ChatBuffers b = chat_buffers(s);
  const std::size_t n_text = pocketlm::render_chat_message(s->chat_template, b.system, s->system_len, message ? message : "",
                                                           len, s->chat_sent, b.render, b.render_bytes);
  if (n_text > b.render_bytes)  // cannot happen: the buffer holds a message, the system prompt and the marks
    return s->fail(Status::error(StatusCode::kOutOfMemory, "message: renders to %zu bytes, more than the %zu of the buffer",
                                 n_text, b.render_bytes));
  const bool bos = pocketlm::chat_message_bos(s->chat_template, s->chat_sent);
  const int capacity = s->session.chat_message_capacity(s->chat_max_reply);
  const pocketlm::Tokenizer& tok = s->session.tokenizer();
  const std::uint64_t at_least = (bos ? 1 : 0) + tok.min_tokens(n_text);
  if (at_least > static_cast<std::uint64_t>(capacity))
    return s->fail(Status::error(StatusCode::kInvalidArgument,
                                 "message: it is at least %llu tokens but at most %d fit in the context of %d tokens; not sent",
                                 static_cast<unsigned long long>(at_least), capacity, s->session.seq_len()));
  int n = 0;
  POCKETLM_C_TRY(s, tok.encode(b.render, n_text, bos, /*eos=*/false, b.tokens, b.token_entries, &n));
  if (n == 0) return s->fail(Status::error(StatusCode::kInvalidArgument, "message: empty; not sent"));
  if (n > capacity)
    return s->fail(Status::error(StatusCode::kInvalidArgument,
                                 "message: it is %d tokens but at most %d fit in the context of %d tokens; not sent", n,
                                 capacity, s->session.seq_len()));
  s->on_token = on_token;
  s->on_token_ctx = ctx;
  s->generated = 0;
  pocketlm::ChatTurnStats cs;
  Status st;
  {
    pocketlm::api::BusyScope busy(s);
    st = busy.finish(s->session.chat_turn(b.tokens, n, s->chat_max_reply, chat_token, s, &cs));
  }
  if (st.ok()) {
    ++s->chat_sent;
    out.input_tokens = cs.input_tokens;
    out.reply_tokens = cs.decode_passes;
    out.context_full = cs.context_full ? 1 : 0;
    out.dropped_tokens = cs.dropped_tokens;
    out.reprefill_tokens = cs.reprefill_tokens;
    out.reply_ended = cs.reply_ended ? 1 : 0;
    out.reply_cut = cs.reply_cut ? 1 : 0;
    out.position = cs.position;
    if (stats) (void)pocketlm::api::write_sized(out, "stats", stats);
  } else if (!s->session.chat_active()) {
    s->chat_begun = false;
  }
  return s->fail(st);
}

}  // extern "C"
