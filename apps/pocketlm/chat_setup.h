// What `chat` and `console` share: reading the sampling flags (as run reads them) and opening a
// session with the chat history.
#pragma once

#include <string>
#include <vector>

#include "chat_driver.h"
#include "cli_common.h"
#include "pocketlm/runtime/session.h"

namespace CLI {
class App;
}

namespace pocketlm::cli {

// Registers -t -p -s -n on a chat command (chat, console): as run's, with -n per reply.
void add_chat_sampling_flags(CLI::App* cmd, std::string* temperature, std::string* topp, std::string* seed,
                             std::string* steps);

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
  FileStorage model, tokenizer;
  Session session;
};

// The flags both commands share besides sampling.
struct ChatSessionFlags {
  std::string model, tokenizer, seq_len, heap, device, kernels, threads;
  std::string kv = "f32";
};

// Reads the memory and backend flags, opens ctx->session with SessionOptions::chat (printing
// the plan first when it is over budget), prints setup's warnings and begins the conversation.
Status start_chat(const ChatSessionFlags& flags, const ChatSetup& setup, ChatContext* ctx);

}  // namespace pocketlm::cli
