// What `chat` and `console` share: reading the sampling flags (as run reads them) and opening a
// session with the chat history.
#pragma once

#include <string>
#include <vector>

#include "cli_common.h"
#include "pocketlm/runtime/session.h"

namespace pocketlm::cli {

struct ChatSetup {
  SamplerParams params;
  int max_reply = 256;
  std::vector<std::string> warnings;  // printed once every input is known to be good
};

// -t -p -s read as run reads them (atof/atoi, run.c's clamping, warnings); -n strictly, >= 0.
Status parse_chat_sampling(const std::string& t, const std::string& p, const std::string& s, const std::string& n,
                           ChatSetup* out);

// Opens `session` on the model (and -z) with SessionOptions::chat; on an over-budget plan it
// prints the plan first. `options` already holds the memory and backend flags.
Status open_chat_session(const std::string& model_path, const std::string& tokenizer_flag, SessionOptions options,
                         FileStorage* model, FileStorage* tokenizer_file, Session* session);

}  // namespace pocketlm::cli
