// The C API's tokens (api/pocketlm.h): encode, token to piece, run.c's generation loop, and
// decode (tokens in, logits out) for a caller's own loop.
#include <cstring>

#include "pocketlm/api/c_session.h"
#include "pocketlm/api/pocketlm.h"

using pocketlm::Status;
using pocketlm::StatusCode;

namespace pocketlm::api {

// The piece a callback receives: llama2.c's decode, empty for BOS and EOS.
void piece_of(const pocketlm_session* s, std::int32_t prev, std::int32_t next, const char** piece, std::size_t* len) {
  const Tokenizer& tok = s->session.tokenizer();
  if (next == tok.bos_id() || next == tok.eos_id()) {
    *piece = "";
    *len = 0;
    return;
  }
  const Piece p = tok.decode(prev, next);
  *piece = reinterpret_cast<const char*>(p.data);
  *len = p.size;
}

bool forward_token(std::int32_t prev, std::int32_t next, void* ctx) {
  pocketlm_session* s = static_cast<pocketlm_session*>(ctx);
  s->generated++;
  const char* piece = nullptr;
  std::size_t len = 0;
  piece_of(s, prev, next, &piece, &len);
  return s->on_token(s->on_token_ctx, next, piece, len) == 0;
}

}  // namespace pocketlm::api

using pocketlm::api::open_session;

extern "C" {

pocketlm_status pocketlm_prompt_capacity(pocketlm_session* session, size_t len, size_t* entries) {
  pocketlm_status code = POCKETLM_OK;
  pocketlm_session* s = open_session(session, "pocketlm_prompt_capacity", &code);
  if (!s) return code;
  if (!entries) return s->fail(Status::error(StatusCode::kInvalidArgument, "pocketlm_prompt_capacity: entries: null"));
  return s->fail(s->session.prompt_capacity(len, entries));
}

pocketlm_status pocketlm_encode(pocketlm_session* session, const char* text, size_t len, int add_bos, int32_t* tokens,
                                size_t capacity, int* n_tokens) {
  pocketlm_status code = POCKETLM_OK;
  pocketlm_session* s = open_session(session, "pocketlm_encode", &code);
  if (!s) return code;
  if (!tokens || !n_tokens || (!text && len))
    return s->fail(Status::error(StatusCode::kInvalidArgument, "pocketlm_encode: %s: null",
                                 !tokens ? "tokens" : !n_tokens ? "n_tokens" : "text"));
  if (add_bos != 0 && add_bos != 1)
    return s->fail(Status::error(StatusCode::kInvalidArgument, "pocketlm_encode: add_bos = %d: must be 0 or 1", add_bos));
  *n_tokens = 0;
  size_t entries = 0;
  POCKETLM_C_TRY(s, s->session.prompt_capacity(len, &entries));
  if (capacity < entries)
    return s->fail(Status::error(StatusCode::kInvalidArgument,
                                 "pocketlm_encode: capacity = %zu entries; a text of %zu bytes needs %zu "
                                 "(pocketlm_prompt_capacity)",
                                 capacity, len, entries));
  int n = 0;
  POCKETLM_C_TRY(s, s->session.tokenizer().encode(text ? text : "", len, add_bos == 1, /*eos=*/false, tokens, capacity, &n));
  if (n > s->session.seq_len())
    return s->fail(Status::error(StatusCode::kInvalidArgument, "text: encodes to %d tokens but the context holds %d (seq_len)",
                                 n, s->session.seq_len()));
  *n_tokens = n;
  return s->fail(Status());
}

pocketlm_status pocketlm_token_to_piece(pocketlm_session* session, int32_t prev, int32_t token, const char** piece,
                                        size_t* len) {
  pocketlm_status code = POCKETLM_OK;
  pocketlm_session* s = open_session(session, "pocketlm_token_to_piece", &code);
  if (!s) return code;
  if (!piece || !len)
    return s->fail(Status::error(StatusCode::kInvalidArgument, "pocketlm_token_to_piece: %s: null", !piece ? "piece" : "len"));
  const int vocab = s->session.spec().config.vocab_size;
  if (token < 0 || token >= vocab || prev < 0 || prev >= vocab)
    return s->fail(Status::error(StatusCode::kInvalidArgument, "pocketlm_token_to_piece: %s = %d is outside [0, %d)",
                                 token < 0 || token >= vocab ? "token" : "prev",
                                 static_cast<int>(token < 0 || token >= vocab ? token : prev), vocab));
  const pocketlm::Piece p = s->session.tokenizer().decode(prev, token);
  *piece = reinterpret_cast<const char*>(p.data);
  *len = p.size;
  return s->fail(Status());
}

pocketlm_status pocketlm_generate(pocketlm_session* session, const int32_t* prompt, int n_prompt, int steps,
                                  const pocketlm_sampler* sampler, pocketlm_token_fn on_token, void* ctx,
                                  pocketlm_stats* stats) {
  pocketlm_status code = POCKETLM_OK;
  pocketlm_session* s = open_session(session, "pocketlm_generate", &code);
  if (!s) return code;
  if (!prompt || !sampler || !on_token)
    return s->fail(Status::error(StatusCode::kInvalidArgument, "pocketlm_generate: %s: null",
                                 !prompt ? "prompt" : !sampler ? "sampler" : "on_token"));
  pocketlm::SamplerParams params;
  POCKETLM_C_TRY(s, pocketlm::api::read_sampler(sampler, "sampler", &params));
  pocketlm_stats out = {};
  out.size = sizeof out;
  if (stats) POCKETLM_C_TRY(s, pocketlm::api::write_sized(out, "stats", stats));
  s->on_token = on_token;
  s->on_token_ctx = ctx;
  s->generated = 0;
  pocketlm::GenerateStats g;
  pocketlm::api::BusyScope busy(s);
  const Status st = busy.finish(s->session.generate(prompt, n_prompt, steps, params, pocketlm::api::forward_token, s, &g));
  out.tokens = s->generated;
  out.prompt_tokens = g.prompt_tokens;
  out.prefill_passes = g.prefill_passes;
  out.decode_passes = g.decode_passes;
  out.prefill_seconds = g.prefill_seconds;
  out.decode_seconds = g.decode_seconds;
  out.storage_bytes = g.storage_bytes;
  out.storage_seeks = g.storage_seeks;
  out.prefill_storage_bytes = g.prefill_storage_bytes;
  out.prefill_storage_seeks = g.prefill_storage_seeks;
  if (stats) (void)pocketlm::api::write_sized(out, "stats", stats);
  s->chat_begun = false;  // the kv cache is this run's now
  return s->fail(st);
}

pocketlm_status pocketlm_decode(pocketlm_session* session, const int32_t* tokens, int n, int pos, const float** logits) {
  pocketlm_status code = POCKETLM_OK;
  pocketlm_session* s = open_session(session, "pocketlm_decode", &code);
  if (!s) return code;
  if (!tokens || !logits)
    return s->fail(Status::error(StatusCode::kInvalidArgument, "pocketlm_decode: %s: null", !tokens ? "tokens" : "logits"));
  *logits = nullptr;
  pocketlm::api::BusyScope busy(s);
  s->chat_begun = false;
  return s->fail(busy.finish(s->session.decode(tokens, n, pos, logits)));
}

}  // extern "C"
