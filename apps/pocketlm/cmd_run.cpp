// `pocketlm run`: llama2.c's run/runq with the same flags, defaults and clamping (and the same
// reading of their values), printing the text to stdout and the speed to stderr.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <ctime>
#include <memory>
#include <string>
#include <vector>

#include "cli_common.h"
#include "std_streams.h"
#include "commands.h"
#include "output_file.h"
#include "runc_flags.h"
#include "story_split.h"
#include "pocketlm/base/byte_size.h"
#include "ports/posix/file_storage.h"
#include "ports/posix/thread_pool.h"
#include "pocketlm/runtime/session.h"
#include "pocketlm/text/utf8_stream.h"

namespace pocketlm::cli {

void add_run_command(CLI::App& app, RunOptions& o) {
  CLI::App* cmd = app.add_subcommand("run", "generate text from a llama2.c checkpoint (flags as llama2.c's run)");
  add_model_argument(cmd, &o.model);
  // -n is read as run.c reads it (atoi, runc_flags.h), hence the text; -t -p -s likewise (session_flags.cpp).
  cmd->add_option("-n", o.steps, "number of steps; 0 or negative = seq_len (default 256)")->type_name("INT");
  cmd->add_option("-i", o.prompt, "input prompt (-: read from stdin)")->type_name("TEXT")->each([&o](const std::string&) {
    o.has_prompt = true;
  });
  cmd->add_option("-f", o.prompt_file, "read the prompt from this file (one trailing newline dropped; -: stdin)")
      ->type_name("FILE");
  cmd->add_option("-m", o.mode, "mode (default generate; chat: run.c's chat loop, one message per line of stdin, see pocketlm chat)")->type_name("generate|chat");
  cmd->add_option("-y", o.system_prompt, "system prompt (chat mode only)")->type_name("TEXT");
  cmd->add_option("--token-log", o.token_log,
                  "write 'prompt: <ids>' and then each next-token id on its own line to this file (-: stdout, after the text)")
      ->type_name("FILE");
  cmd->add_option("--samples", o.samples,
                  "generate N independent samples of the prompt, sample k with seed -s + k, each until BOS or -n "
                  "steps, separated by lines holding only <|endoftext|> (default 1)")
      ->type_name("N");
  add_session_flags(cmd, kCmdRun, &o);
}

namespace {

struct RunContext {
  const Tokenizer* tokenizer;
  Utf8Stream* text;
  std::vector<std::int32_t>* log;
};

void write_stdout(const char* text, std::size_t len, void* /*ctx*/) { std::fwrite(text, 1, len, stdout); }

bool on_token(std::int32_t prev, std::int32_t next, void* ctx) {
  auto* c = static_cast<RunContext*>(ctx);
  c->log->push_back(next);
  if (next == c->tokenizer->bos_id()) return false;
  const Piece p = c->tokenizer->decode(prev, next);
  c->text->write_piece(p.data, p.size);
  return flush_stdout();  // stdout failed (a full disk): generating more would be lost too
}

struct Sampling {
  SamplerParams params;
  int steps = 256;
  std::string steps_note;  // how -n was read, when surprising (completed once seq_len is known)
  // Warnings, printed only once every input is known to be good, so that an error is
  // always the one line on stderr.
  std::vector<std::string> warnings;
};

// run.c's flag rules (runc_flags.h): atof/atoi, temperature < 0 becomes 0, top-p outside
// [0,1] becomes 0.9, a seed of 0 means "from the clock", steps < 0 becomes 0 (= seq_len).
Status parse_sampling(const RunOptions& o, Sampling* out) {
  std::string warning;
  POCKETLM_TRY(runc_temperature("-t", o.temperature, &out->params.temperature, &warning));
  if (!warning.empty()) out->warnings.push_back(warning);
  POCKETLM_TRY(runc_topp("-p", o.topp, &out->params.topp, &warning));
  if (!warning.empty()) out->warnings.push_back(warning);
  runc_seed("-s", o.seed, static_cast<unsigned int>(std::time(nullptr)), &out->params.seed, &warning);
  if (!warning.empty()) out->warnings.push_back(warning);
  if (o.steps.empty())
    out->steps = 256;  // run.c's default, clamped to seq_len without a warning
  else
    runc_steps("-n", o.steps, &out->steps, &out->steps_note);
  return Status();
}

// The final step count: 0 and anything beyond seq_len mean seq_len, as in run.c.
int clamp_steps(const RunOptions& o, int seq_len, Sampling* sampling) {
  const int steps = sampling->steps;
  const int used = steps == 0 || steps > seq_len ? seq_len : steps;
  std::string w = sampling->steps_note;
  if (steps > seq_len && !o.steps.empty())
    w += (w.empty() ? "-n: " : "; ") + std::to_string(steps) + " steps exceed seq_len " + std::to_string(seq_len);
  if (!w.empty()) sampling->warnings.push_back(w + "; using " + std::to_string(used) + ", as llama2.c does");
  return used;
}

// The prompt of -f FILE or -i - (stdin); -i TEXT as given. A file's one trailing newline is
// dropped (an editor's, not part of the prompt).
Status read_prompt(const RunOptions& o, std::string* text) {
  if (!o.prompt_file.empty() && o.has_prompt)
    return Status::error(StatusCode::kInvalidArgument, "-i and -f %s: give the prompt one way", o.prompt_file.c_str());
  const std::string& from = !o.prompt_file.empty() ? o.prompt_file : o.prompt == "-" && o.has_prompt ? o.prompt : "";
  if (from.empty()) return Status();
  POCKETLM_TRY(read_text_input(from, from == "-" ? "stdin prompt" : "-f prompt", text));
  if (text->find('\0') != std::string::npos)
    return Status::error(StatusCode::kInvalidArgument, "%s: the prompt holds a NUL byte: not text", from.c_str());
  if (!text->empty() && text->back() == '\n') text->pop_back();
  if (!text->empty() && text->back() == '\r') text->pop_back();
  return Status();
}

// Adds a later sample's stats to the first's (--samples): counts and times add up; achieved
// tok/s and the time to the first token stay the first sample's, as run.c defines them for one.
void add_stats(const GenerateStats& one, GenerateStats* sum) {
  sum->prompt_tokens += one.prompt_tokens;
  sum->prefill_passes += one.prefill_passes;
  sum->decode_passes += one.decode_passes;
  sum->prefill_seconds += one.prefill_seconds;
  sum->decode_seconds += one.decode_seconds;
  sum->storage_reads += one.storage_reads;
  sum->storage_seeks += one.storage_seeks;
  sum->storage_bytes += one.storage_bytes;
  sum->prefill_storage_bytes += one.prefill_storage_bytes;
  sum->prefill_storage_seeks += one.prefill_storage_seeks;
}

}  // namespace

int run_run(const RunOptions& o) {
  if (o.mode == "chat") return run_chat_mode(o);
  if (o.mode != "generate") return fail("-m: unknown mode '" + o.mode + "' (expected generate or chat)");

  Sampling sampling;
  Status st = parse_sampling(o, &sampling);
  if (!st.ok()) return fail(st);
  if (o.samples < 1) return fail("--samples: " + std::to_string(o.samples) + " samples; 1 or more");
  // Seeds -s, -s + 1, ...: none may wrap to 0, the xorshift state that never leaves 0.
  if (sampling.params.seed > UINT64_MAX - static_cast<std::uint64_t>(o.samples - 1))
    return fail("--samples: " + std::to_string(o.samples) + " samples from seed " + std::to_string(sampling.params.seed) +
                " would wrap the 64-bit seed to 0");
  if (o.samples > 1 && !o.token_log.empty())
    return fail("--token-log: logs one sample's ids; it cannot be combined with --samples " + std::to_string(o.samples));
  // run.c takes -y in generate mode and drops it: accepted as there, but not in silence.
  if (!o.system_prompt.empty())
    sampling.warnings.push_back("-y: generate mode has no system prompt, so it is not used (it is for -m chat)");
  SessionOptions options;
  HostResources host;
  st = parse_session_flags(o, &options, &host);
  if (!st.ok()) return fail(st);

  ModelFiles files;
  st = files.open(o.model, o.tokenizer);
  // The log is renamed over its target: never the model or the tokenizer (also tokenizer.bin,
  // run.c's default when -z is not given).
  if (st.ok() && !o.token_log.empty() && !is_stdout_path(o.token_log))
    st = check_output(o.token_log, "--token-log",
                      {{"model", o.model}, {"-z", files.tokenizer ? files.tokenizer_label : ""}});
  if (!st.ok()) return fail(st);

  Session session;
  st = open_session(files, options, &session);
  if (!st.ok()) return fail(st);

  const int steps = clamp_steps(o, session.seq_len(), &sampling);

  std::string text = o.prompt;
  st = read_prompt(o, &text);
  if (!st.ok()) return fail(st);
  std::size_t entries = 0;
  st = session.prompt_capacity(text.size(), &entries);
  if (!st.ok()) return fail(st);
  std::vector<std::int32_t> prompt(entries);
  int n_prompt = 0;
  st = session.encode(text.c_str(), text.size(), prompt.data(), prompt.size(), &n_prompt);
  if (!st.ok()) return fail(st);
  // run.c stops at -n positions even inside the prompt: the text is the prompt's start.
  if (steps < n_prompt)
    sampling.warnings.push_back("-n: " + std::to_string(steps) + " steps end inside the prompt's " +
                                std::to_string(n_prompt) + " tokens (BOS included): nothing is generated and the "
                                "prompt is cut, as llama2.c does");

  OutputFile log_file;
  if (!o.token_log.empty()) {
    st = log_file.open(o.token_log, "--token-log", /*text_to_stdout=*/true);
    if (!st.ok()) return fail(st);
  }
  if (!files.tokenizer_warning.empty()) warn(files.tokenizer_warning);
  for (const std::string& w : sampling.warnings) warn(w);
  std::vector<std::int32_t> log;
  log.reserve(static_cast<std::size_t>(steps) + 1);
  Utf8Stream out(write_stdout, nullptr);
  RunContext ctx{&session.tokenizer(), &out, &log};
  GenerateStats stats;
  SamplerParams params = sampling.params;
  for (int k = 0; k < o.samples; ++k) {
    if (k > 0) {
      out.flush();
      std::printf("\n%s\n", kStorySeparator);
      params.seed = sampling.params.seed + static_cast<std::uint64_t>(k);
    }
    GenerateStats one;
    st = session.generate(prompt.data(), n_prompt, steps, params, on_token, &ctx, k == 0 ? &stats : &one);
    if (!st.ok()) return fail(st);
    if (k > 0) add_stats(one, &stats);
  }
  out.flush();
  std::printf("\n");
  flush_stdout();
  // A normal temperature can still overflow logits / T (2e-38 with logits of ~10): those tokens
  // were the T -> 0 limit, greedy. (A subnormal -t was announced before generating.)
  const int limit = session.sampler().greedy_limit_samples();
  if (limit > 0 && !temperature_is_greedy_limit(sampling.params.temperature))
    warn("-t: logits / " + o.temperature + " overflowed float at " + std::to_string(limit) + " of " +
         std::to_string(stats.decode_passes) + " sampled tokens; those were sampled as the T -> 0 limit, greedily "
         "(what -t 0 gives)");

  if (stats.prefill_passes + stats.decode_passes > 1)
    std::fprintf(stderr, "achieved tok/s: %f\n", stats.achieved_tok_per_s);
  // A prompt of BOS alone has no prefill pass, and a prompt that fills -n no decode pass:
  // "n/a", not a rate of 0.
  char prefill[32] = "n/a", decode[32] = "n/a";
  if (stats.prefill_passes > 0) std::snprintf(prefill, sizeof prefill, "%.1f tok/s", stats.prefill_tok_per_s());
  if (stats.decode_passes > 0) std::snprintf(decode, sizeof decode, "%.1f tok/s", stats.decode_tok_per_s());
  // Weights kept in storage: what each forward pass read from the model file, as counted.
  char storage[96] = "";
  const int passes = stats.prefill_passes + stats.decode_passes;
  if (stats.storage_bytes > 0 && passes > 0)
    std::snprintf(storage, sizeof storage, ", storage %llu bytes and %llu reads per token",
                  static_cast<unsigned long long>(stats.storage_bytes / static_cast<std::uint64_t>(passes)),
                  static_cast<unsigned long long>(stats.storage_reads / static_cast<std::uint64_t>(passes)));
  std::fprintf(stderr,
               "pocketlm: prompt %s, generated %s, prefill %s, decode %s, "
               "arena %llu bytes%s, kernels %s, threads %d\n",
               counted(stats.prompt_tokens, "token").c_str(), counted(stats.decode_passes, "token").c_str(), prefill, decode,
               static_cast<unsigned long long>(session.arena_bytes()), storage, session.kernels().name,
               session.threads());

  if (log_file.is_open()) {
    std::string body = "prompt:";
    for (int i = 0; i < n_prompt; ++i) body += " " + std::to_string(prompt[static_cast<std::size_t>(i)]);
    body += "\n";
    for (std::int32_t id : log) body += std::to_string(id) + "\n";
    st = log_file.write(body.data(), body.size());
    if (st.ok()) st = log_file.commit();
    if (!st.ok()) return fail(st);
  }
  return kExitOk;
}

}  // namespace pocketlm::cli
