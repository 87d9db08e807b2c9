#include "chat_driver.h"

#include <string>

#include "cli_common.h"
#include "pocketlm/base/format.h"

namespace pocketlm::cli {

Status parse_chat_template(const std::string& name, ChatTemplate* out) {
  if (!find_chat_template(name.c_str(), out))
    return Status::error(StatusCode::kInvalidArgument, "--template: unknown template '%s' (expected none or llama2)",
                         name.c_str());
  return Status();
}

std::string render_chat_message(ChatTemplate t, const std::string& system, const std::string& user, int turn) {
  const std::size_t n = pocketlm::render_chat_message(t, system.data(), system.size(), user.data(), user.size(), turn,
                                                      nullptr, 0);
  std::string text(n, '\0');
  pocketlm::render_chat_message(t, system.data(), system.size(), user.data(), user.size(), turn, text.data(), n);
  return text;
}

void ChatDriver::sink(const char* text, std::size_t len, void* ctx) {
  auto* self = static_cast<ChatDriver*>(ctx);
  if (self->on_text) self->on_text(text, len);
}

bool ChatDriver::on_token(std::int32_t prev, std::int32_t next, void* ctx) {
  auto* self = static_cast<ChatDriver*>(ctx);
  self->current_->reply.push_back(next);
  const Tokenizer& tok = self->session_.tokenizer();
  if (next == tok.bos_id() || next == tok.eos_id()) return true;
  const Piece p = tok.decode(prev, next);
  self->stream_->write_piece(p.data, p.size);
  return true;
}

Status ChatDriver::turn(const std::string& user, ChatTurnResult* result) {
  *result = ChatTurnResult();
  const std::string text = render_chat_message(template_, system_, user, sent_);
  const bool bos = chat_message_bos(template_, sent_);
  const Tokenizer& tokenizer = session_.tokenizer();
  const int capacity = session_.chat_message_capacity(max_reply_);
  auto refuse = [&](const std::string& notice) {
    result->refused = true;
    if (on_notice) on_notice(notice);
    return Status();
  };
  auto too_long = [&](const std::string& tokens) {
    return refuse("[message refused: it is " + tokens + " but at most " + std::to_string(capacity) +
                  " fit in the context of " + counted(session_.seq_len(), "token") + "; not sent]");
  };
  // A message whose length alone proves it cannot fit is refused before it is encoded.
  const std::uint64_t at_least = (bos ? 1 : 0) + tokenizer.min_tokens(text.size());
  if (at_least > static_cast<std::uint64_t>(capacity)) return too_long("at least " + counted(at_least, "token"));
  std::size_t entries = 0;
  POCKETLM_TRY(Tokenizer::encode_capacity(text.size(), &entries));
  std::vector<std::int32_t> tokens(entries);
  int n = 0;
  POCKETLM_TRY(tokenizer.encode(text.c_str(), text.size(), bos, /*eos=*/false, tokens.data(), tokens.size(), &n));
  if (n == 0) return refuse("[empty message: not sent]");
  if (n > capacity) return too_long(counted(n, "token"));
  const ChatRoom room = session_.chat_room(n, max_reply_);
  if (room.context_full && on_notice)
    on_notice("[context full: dropping the " + std::to_string(room.dropped_tokens) + " oldest token" +
              plural_s(room.dropped_tokens) + " after the kept opening (BOS and the first message, " +
              counted(session_.chat_pinned(), "token") + "); re-running the " + std::to_string(room.reprefill_tokens) +
              " kept token" + plural_s(room.reprefill_tokens) + " of the newest turns]");
  Utf8Stream stream(sink, this);
  current_ = result;
  stream_ = &stream;
  const Status st = session_.chat_turn(tokens.data(), n, max_reply_, on_token, this, &result->stats);
  stream.flush();
  current_ = nullptr;
  stream_ = nullptr;
  POCKETLM_TRY(st);
  ++sent_;
  const ChatTurnStats& s = result->stats;
  if (s.reply_cut && on_notice) on_notice("[context full: the reply was cut; the next message makes room]");
  return Status();
}

}  // namespace pocketlm::cli
