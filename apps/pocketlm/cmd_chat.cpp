// `pocketlm chat` (and `run -m chat`): a conversation that keeps its kv cache. Messages are read
// line by line from stdin (a terminal, a pipe or a file); replies go to stdout; notices (context
// full, a refused message) and a summary per turn go to stderr.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <string>
#include <unistd.h>

#include "chat_driver.h"
#include "chat_setup.h"
#include "cli_common.h"
#include "std_streams.h"
#include "commands.h"

namespace pocketlm::cli {

void add_chat_command(CLI::App& app, ChatOptions& o) {
  CLI::App* cmd = app.add_subcommand(
      "chat", "a conversation that keeps its kv cache: one message per line of stdin, each reply to stdout");
  add_model_argument(cmd, &o.model);
  add_reply_steps_flag(cmd, &o.steps);
  cmd->add_option("-i", o.prompt, "the first message (the rest from stdin)")->type_name("TEXT")->each(
      [&o](const std::string&) { o.has_prompt = true; });
  cmd->add_option("-y", o.system_prompt, "system prompt (needs --template llama2)")->type_name("TEXT")->each(
      [&o](const std::string&) { o.has_system_prompt = true; });
  cmd->add_option("--template", o.chat_template,
                  "how messages become tokens: none = plain text continued turn by turn (default; stories models), "
                  "llama2 = run.c's [INST] <<SYS>> template for Llama-2-chat models")
      ->type_name("none|llama2");
  add_session_flags(cmd, kCmdChat, &o);
}

namespace {

void write_stdout(const char* text, std::size_t len) {
  std::fwrite(text, 1, len, stdout);
  flush_stdout();
}

// One line of stdin without its newline (and a CR before it); false at the end of input.
bool read_line(std::string* line) {
  line->clear();
  int c;
  bool any = false;
  while ((c = std::fgetc(stdin)) != EOF) {
    any = true;
    if (c == '\n') break;
    line->push_back(static_cast<char>(c));
  }
  if (!line->empty() && line->back() == '\r') line->pop_back();
  return any;
}

}  // namespace

int run_chat(const ChatOptions& o) {
  ChatSetup setup;
  Status st = parse_chat_flags(o.chat_template, o.temperature, o.topp, o.seed, o.steps, &setup);
  if (st.ok()) st = check_system_prompt(setup.chat_template, !o.system_prompt.empty());
  if (!st.ok()) return fail(st);
  ChatContext ctx;
  st = start_chat(o.model, o, setup, &ctx);
  if (!st.ok()) return fail(st);
  Session& session = ctx.session;

  const bool tty = isatty(STDIN_FILENO) != 0;
  std::string system = o.system_prompt;
  if (o.system_from_stdin && !o.has_system_prompt) {
    // run.c asks for the system prompt first when -y is not given.
    std::printf("Enter system prompt (optional): ");
    flush_stdout();
    read_line(&system);
    if (!tty) std::printf("%s\n", system.c_str());
  }
  ChatDriver driver(session, setup.chat_template, system, setup.max_reply);
  driver.on_text = write_stdout;
  driver.on_notice = [](const std::string& notice) {
    flush_stdout();
    std::fprintf(stderr, "pocketlm: %s\n", notice.c_str());
  };
  bool first = true;
  int turn = 0;
  for (;;) {
    std::string line;
    std::printf("User: ");
    flush_stdout();
    if (first && o.has_prompt) {
      line = o.prompt;
      std::printf("%s\n", line.c_str());
    } else {
      if (!read_line(&line)) {
        std::printf("\n");
        break;
      }
      if (!tty) std::printf("%s\n", line.c_str());
    }
    first = false;
    if (line.empty()) continue;
    std::printf("Assistant: ");
    flush_stdout();
    ChatTurnResult result;
    st = driver.turn(line, &result);
    if (!st.ok()) return fail(st);
    std::printf("\n");
    flush_stdout();
    if (result.refused) continue;
    ++turn;
    const ChatTurnStats& s = result.stats;
    std::fprintf(stderr,
                 "pocketlm: turn %d: prefill %s (%d batched pass%s), reply %s, re-ran %d, kv cache %d of %s\n", turn,
                 counted(s.input_tokens, "token").c_str(), s.prefill_blocks, s.prefill_blocks == 1 ? "" : "es",
                 counted(s.decode_passes, "token").c_str(), s.reprefill_tokens, s.position,
                 counted(session.seq_len(), "position").c_str());
  }
  return kExitOk;
}

int run_chat_mode(const RunOptions& r) {
  if (!r.token_log.empty()) return fail("--token-log: not available with -m chat (it logs one generate run)");
  ChatOptions o;
  static_cast<SessionFlags&>(o) = r;  // every session flag as run was given it
  o.model = r.model;
  // run.c's -n bounds the whole conversation; here it bounds each reply (default 256).
  o.steps = r.steps.empty() ? "256" : r.steps;
  o.prompt = r.prompt;
  o.has_prompt = r.has_prompt;
  o.system_prompt = r.system_prompt;
  o.has_system_prompt = !r.system_prompt.empty();
  o.system_from_stdin = true;
  o.chat_template = "llama2";
  return run_chat(o);
}

}  // namespace pocketlm::cli
