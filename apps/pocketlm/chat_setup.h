// What `chat` and `console` share: reading the sampling flags (as run reads them) and opening a
// session with the chat history.
#pragma once

#include <string>
#include <vector>

#include "chat_driver.h"
#include "cli_common.h"
#include "session_flags.h"
#include "pocketlm/runtime/session.h"

namespace CLI {
class App;
}

namespace pocketlm::cli {

// Registers -n on a chat command (chat, console): most tokens per reply (-t -p -s are the
// session flags, as run's).
void add_reply_steps_flag(CLI::App* cmd, std::string* steps);

struct ChatSetup {
  ChatTemplate chat_template = ChatTemplate::kNone;
  SamplerParams params;
  int max_reply = 256;
  std::vector<std::string> warnings;  // printed once every input is known to be good
};

// --template; -t -p -s read as run reads them (atof/atoi, run.c's clamping, warnings); -n
// strictly, >= 0.
Status parse_chat_flags(const std::string& chat_template, const std::string& t, const std::string& p,
                        const std::string& s, const std::string& n, ChatSetup* out);

// A session opened for chat, with what the host lends it and the files it reads.
struct ChatContext {
  HostResources host;
  ModelFiles files;
  Session session;
};

// -y with --template: a system prompt has a place only in the llama2 template (<<SYS>>); the
// none template sends each message as plain text, so a given system prompt would be dropped
// without a word. An error instead, naming both flags.
Status check_system_prompt(ChatTemplate t, bool given);

// Reads the memory and backend flags, opens ctx->session with SessionOptions::chat (printing
// the plan first when it is over budget), prints setup's warnings and begins the conversation.
Status start_chat(const std::string& model, const SessionFlags& flags, const ChatSetup& setup, ChatContext* ctx);

}  // namespace pocketlm::cli
