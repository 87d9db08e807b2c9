#include "chat_setup.h"

#include <CLI/CLI.hpp>
#include <ctime>

#include "runc_flags.h"

namespace pocketlm::cli {

void add_reply_steps_flag(CLI::App* cmd, std::string* steps) {
  cmd->add_option("-n", *steps, "most tokens per reply; 0 = until EOS/BOS or a full context")
      ->type_name("INT")
      ->capture_default_str();
}

Status parse_chat_flags(const std::string& chat_template, const std::string& t, const std::string& p,
                        const std::string& s, const std::string& n, ChatSetup* out) {
  POCKETLM_TRY(parse_chat_template(chat_template, &out->chat_template));
  std::string warning;
  POCKETLM_TRY(runc_temperature("-t", t, &out->params.temperature, &warning));
  if (!warning.empty()) out->warnings.push_back(warning);
  POCKETLM_TRY(runc_topp("-p", p, &out->params.topp, &warning));
  if (!warning.empty()) out->warnings.push_back(warning);
  runc_seed("-s", s, static_cast<unsigned int>(std::time(nullptr)), &out->params.seed, &warning);
  if (!warning.empty()) out->warnings.push_back(warning);
  long long steps = 0;
  POCKETLM_TRY(parse_int("-n", n, 0, 1 << 30, &steps));
  out->max_reply = static_cast<int>(steps);
  return Status();
}

Status check_system_prompt(ChatTemplate t, bool given) {
  if (given && t == ChatTemplate::kNone)
    return Status::error(StatusCode::kInvalidArgument,
                         "-y: a system prompt needs --template llama2 (the default, none, sends messages as plain "
                         "text and has no place for one)");
  return Status();
}

Status start_chat(const std::string& model, const SessionFlags& flags, const ChatSetup& setup, ChatContext* ctx) {
  SessionOptions options;
  POCKETLM_TRY(parse_session_flags(flags, &options, &ctx->host));
  POCKETLM_TRY(ctx->files.open(model, flags.tokenizer));
  options.chat = true;
  POCKETLM_TRY(open_session(ctx->files, options, &ctx->session));
  if (!ctx->files.tokenizer_warning.empty()) warn(ctx->files.tokenizer_warning);
  for (const std::string& w : setup.warnings) warn(w);
  return ctx->session.chat_begin(setup.params);
}

}  // namespace pocketlm::cli
