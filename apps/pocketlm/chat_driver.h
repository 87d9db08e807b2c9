// ChatDriver: the CLI's side of a conversation (pocketlm chat, run -m chat, console): renders
// each user message with the chat template, encodes it, runs Session::chat_turn and turns the
// reply tokens into UTF-8 text; the context-full policy and refused messages become notices.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "pocketlm/runtime/session.h"
#include "pocketlm/text/chat_template.h"
#include "pocketlm/text/utf8_stream.h"

namespace pocketlm::cli {

// How a message becomes tokens (--template): text/chat_template.h's templates.
Status parse_chat_template(const std::string& name, ChatTemplate* out);

// The text the template makes of message number `turn` (0 = the first).
std::string render_chat_message(ChatTemplate t, const std::string& system, const std::string& user, int turn);

struct ChatTurnResult {
  bool refused = false;             // the message did not fit the context; nothing was run
  std::vector<std::int32_t> reply;  // the sampled tokens (an ending EOS/BOS included)
  ChatTurnStats stats;
};

class ChatDriver {
 public:
  ChatDriver(Session& session, ChatTemplate t, std::string system, int max_reply)
      : session_(session), template_(t), system_(std::move(system)), max_reply_(max_reply) {}
  // Receives the reply's text (valid UTF-8, EOS/BOS not shown) as it is generated.
  std::function<void(const char*, std::size_t)> on_text;
  // Receives one-line notices: the context-full policy, a refused message.
  std::function<void(const std::string&)> on_notice;

  // Runs one user message. A message that does not fit is refused with a notice (not an error).
  Status turn(const std::string& user, ChatTurnResult* result);
  int turns_sent() const { return sent_; }

 private:
  static void sink(const char* text, std::size_t len, void* ctx);
  static bool on_token(std::int32_t prev, std::int32_t next, void* ctx);

  Session& session_;
  ChatTemplate template_;
  std::string system_;
  int max_reply_;
  int sent_ = 0;
  ChatTurnResult* current_ = nullptr;
  Utf8Stream* stream_ = nullptr;
};

}  // namespace pocketlm::cli
