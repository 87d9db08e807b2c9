// Session's chat: turns appended to the kv cache, and the context-full policy (session.h).
#include <cstdint>

#include "pocketlm/runtime/session.h"

namespace pocketlm {

namespace {

int min_int(int a, int b) { return a < b ? a : b; }

// Positions reserved for a reply when a turn starts: min(max_reply or seq_len, seq_len / 4), at least 1.
int reply_reserve(int max_reply, int seq_len) {
  const int quarter = seq_len / 4 > 0 ? seq_len / 4 : 1;
  return max_reply > 0 ? min_int(max_reply, quarter) : quarter;
}

}  // namespace

Status Session::run_positions(const std::int32_t* tokens, int count, int pos, int* blocks) {
  int i = 0;
  while (const int c = prefill_block(count - i)) {
    POCKETLM_TRY(check_abort());
    model_->forward_batch(tokens + i, c, pos + i);
    POCKETLM_TRY(model_->status());
    ++*blocks;
    i += c;
  }
  for (; i < count; ++i) {
    POCKETLM_TRY(check_abort());
    model_->forward(tokens[i], pos + i);
    POCKETLM_TRY(model_->status());
  }
  return Status();
}

Status Session::chat_begin(const SamplerParams& params) {
  if (!ready_)
    return Status::error(StatusCode::kInvalidArgument, "session: chat_begin() needs a session that opened successfully");
  if (!chat_tokens_)
    return Status::error(StatusCode::kInvalidArgument, "session: chat needs SessionOptions::chat (the chat history)");
  if (params.seed == 0)
    return Status::error(StatusCode::kInvalidArgument, "seed = 0 would stall the xorshift generator");
  sampler_.configure(params, *kernels_);
  chat_pos_ = 0;
  chat_turns_ = 0;
  chat_pinned_ = 0;
  chat_pending_ = -1;
  chat_begun_ = true;
  return Status();
}

int Session::chat_message_capacity(int max_reply) const {
  if (!chat_begun_ || max_reply < 0) return 0;
  // Behind the pinned opening, the pending token and the reply's reserve: the first turn too,
  // so that its reply gets the reserve a later one gets.
  const int free = seq_len() - chat_pinned_ - (chat_pending_ >= 0 ? 1 : 0) - reply_reserve(max_reply, seq_len());
  return free > 0 ? free : 0;
}

ChatRoom Session::plan_room(int n_in, int reserve) const {
  ChatRoom room;
  const int seq = seq_len();
  if (chat_turns_ == 0 || chat_pos_ + n_in + reserve <= seq) return room;
  // The newest turns whose positions, behind the pinned opening, leave room for the input and
  // the reserve; turn 0's part past the opening is always dropped.
  const int tail_max = seq - chat_pinned_ - n_in - reserve;
  int k = 1;
  while (k < chat_turns_ && chat_pos_ - chat_starts_[k] > tail_max) ++k;
  const int src = k < chat_turns_ ? chat_starts_[k] : chat_pos_;
  room.context_full = true;
  room.first_kept_turn = k;
  room.dropped_tokens = src - chat_pinned_;
  room.reprefill_tokens = chat_pos_ - src;
  return room;
}

ChatRoom Session::chat_room(int n, int max_reply) const {
  if (!chat_begun_) return ChatRoom();
  return plan_room(n + (chat_pending_ >= 0 ? 1 : 0), reply_reserve(max_reply, seq_len()));
}

Status Session::make_room(const ChatRoom& room, ChatTurnStats* stats) {
  if (!room.context_full) return Status();
  const int k = room.first_kept_turn, shift = room.dropped_tokens, tail = room.reprefill_tokens;
  const int src = chat_pinned_ + shift;
  for (int i = 0; i < tail; ++i) chat_tokens_[chat_pinned_ + i] = chat_tokens_[src + i];
  for (int t = k; t < chat_turns_; ++t) chat_starts_[1 + t - k] = chat_starts_[t] - shift;
  chat_turns_ = 1 + chat_turns_ - k;
  chat_pos_ = chat_pinned_ + tail;
  stats->context_full = true;
  stats->dropped_tokens = shift;
  stats->reprefill_tokens = tail;
  // The kept turns at their new positions: their keys carry the RoPE of the old ones.
  POCKETLM_TRY(run_positions(chat_tokens_ + chat_pinned_, tail, chat_pinned_, &stats->prefill_blocks));
  stats->forward_passes += tail;
  return Status();
}

Status Session::chat_turn(const std::int32_t* message, int n, int max_reply, TokenCallback on_token, void* ctx,
                          ChatTurnStats* stats) {
  const int position = chat_pos_, turns = chat_turns_;
  const Status st = run_chat_turn(message, n, max_reply, on_token, ctx, stats);
  // A refused message leaves everything as it was; any other error mid-turn ends the conversation.
  if (!st.ok() && (chat_pos_ != position || chat_turns_ != turns)) {
    model_->settle();
    chat_begun_ = false;
  }
  return st;
}

Status Session::run_chat_turn(const std::int32_t* message, int n, int max_reply, TokenCallback on_token, void* ctx,
                              ChatTurnStats* stats) {
  if (!chat_begun_)
    return Status::error(StatusCode::kInvalidArgument, "session: chat_turn() needs chat_begin() first");
  const int vocab = spec().config.vocab_size;
  if (n < 1) return Status::error(StatusCode::kInvalidArgument, "turn: the message has no tokens");
  for (int i = 0; i < n; ++i)
    if (message[i] < 0 || message[i] >= vocab)
      return Status::error(StatusCode::kInvalidArgument, "turn: token %d = %d is outside [0, %d)", i,
                           static_cast<int>(message[i]), vocab);
  if (max_reply < 0) return Status::error(StatusCode::kInvalidArgument, "turn: max_reply = %d is negative", max_reply);
  const int seq = seq_len();
  const int capacity = chat_message_capacity(max_reply);
  if (n > capacity)
    return Status::error(StatusCode::kInvalidArgument,
                         "turn: the message is %d tokens but at most %d fit in the context (seq_len %d, %d kept from "
                         "the first turn, %d reserved for the reply); not sent",
                         n, capacity, seq, chat_pinned_, reply_reserve(max_reply, seq));
  auto now = [this] { return clock_ ? clock_() : std::uint64_t{0}; };
  ChatTurnStats s;
  const std::uint64_t start = now();
  begin_call();
  POCKETLM_TRY(check_abort());
  const int n_in = n + (chat_pending_ >= 0 ? 1 : 0);
  POCKETLM_TRY(make_room(plan_room(n_in, reply_reserve(max_reply, seq)), &s));

  // The input: the pending token, then the message, into the history at the current position.
  const int begin = chat_pos_;
  int w = begin;
  if (chat_pending_ >= 0) chat_tokens_[w++] = chat_pending_;
  for (int i = 0; i < n; ++i) chat_tokens_[w++] = message[i];
  chat_pending_ = -1;
  chat_starts_[chat_turns_++] = begin;
  if (chat_turns_ == 1) chat_pinned_ = min_int(n_in, seq / 4);
  s.input_tokens = n_in;
  POCKETLM_TRY(run_positions(chat_tokens_ + begin, n_in - 1, begin, &s.prefill_blocks));
  const int last = begin + n_in - 1;
  float* logits = model_->forward(chat_tokens_[last], last);
  POCKETLM_TRY(model_->status());
  s.forward_passes += n_in;
  chat_pos_ = begin + n_in;
  const std::uint64_t t = now();
  s.prefill_seconds = seconds(t - start);

  // The reply.
  const int bos = spec().config.bos_id, eos = spec().config.eos_id;
  std::int32_t prev = chat_tokens_[last];
  for (;;) {
    if (!logits_finite(logits, vocab))
      return Status::error(StatusCode::kBadFormat,
                           "model: the logits at position %d are not finite (NaN or inf): the weights overflow float "
                           "arithmetic; stopping instead of sampling",
                           chat_pos_ - 1);
    const std::int32_t next = sampler_.sample(logits);
    ++s.decode_passes;
    chat_pending_ = next;
    const bool keep_going = on_token ? on_token(prev, next, ctx) : true;
    if (next == eos || next == bos) {
      s.reply_ended = true;
      break;
    }
    if (!keep_going || (max_reply > 0 && s.decode_passes >= max_reply)) break;
    if (chat_pos_ >= seq) {
      s.reply_cut = true;
      break;
    }
    POCKETLM_TRY(check_abort());
    logits = model_->forward(next, chat_pos_);
    POCKETLM_TRY(model_->status());
    chat_tokens_[chat_pos_++] = next;
    chat_pending_ = -1;
    ++s.forward_passes;
    prev = next;
  }
  model_->settle();
  s.decode_seconds = seconds(now() - t);
  s.position = chat_pos_;
  if (stats) *stats = s;
  return Status();
}

}  // namespace pocketlm
