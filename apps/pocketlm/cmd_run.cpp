// `pocketlm run`: llama2.c's run/runq with the same flags, defaults and clamping, printing
// the text to stdout and the speed to stderr.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <ctime>
#include <memory>
#include <string>
#include <vector>

#include "cli_common.h"
#include "commands.h"
#include "output_file.h"
#include "pocketlm/base/byte_size.h"
#include "ports/posix/clock.h"
#include "ports/posix/file_storage.h"
#include "ports/posix/thread_pool.h"
#include "pocketlm/runtime/session.h"
#include "pocketlm/text/utf8_stream.h"

namespace pocketlm::cli {

void add_run_command(CLI::App& app, RunOptions& o) {
  CLI::App* cmd = app.add_subcommand("run", "generate text from a llama2.c checkpoint (flags as llama2.c's run)");
  cmd->add_option("model", o.model, "checkpoint: llama2.c v0/v1 fp32 or v2 q80 .bin")->required();
  cmd->add_option("-t", o.temperature, "temperature in [0,inf), 0 = greedy (default 1.0)");
  cmd->add_option("-p", o.topp, "top-p in [0,1]; 0 or 1 = plain multinomial (default 0.9)");
  cmd->add_option("-s", o.seed, "random seed (default: the current time)");
  cmd->add_option("-n", o.steps, "number of steps, 0 = seq_len (default 256)");
  cmd->add_option("-i", o.prompt, "input prompt")->each([&o](const std::string&) { o.has_prompt = true; });
  cmd->add_option("-z", o.tokenizer, "tokenizer.bin path (default tokenizer.bin)");
  cmd->add_option("-m", o.mode, "mode: generate (chat is not supported yet)");
  cmd->add_option("-y", o.system_prompt, "system prompt (chat mode)");
  cmd->add_option("--token-log", o.token_log,
                  "write 'prompt: <ids>' and then each next-token id on its own line to this file");
  cmd->add_option("--heap", o.heap, "memory budget, e.g. 24M, 24MiB or 25165824; over it: print the plan, exit 1");
  cmd->add_option("--seq-len", o.seq_len, "context length in tokens (<= the model's; shrinks the kv cache)");
  cmd->add_option("--kernels", o.kernels, "kernel backend (default: the fastest exact one)");
  cmd->add_option("--threads", o.threads, "worker threads for matmul rows and attention heads (default 1)");
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
  if (next == kBosToken) return false;
  const Piece p = c->tokenizer->decode(prev, next);
  c->text->write_piece(p.data, p.size);
  std::fflush(stdout);
  return true;
}

struct Sampling {
  SamplerParams params;
  int steps = 256;
  // Clamp warnings, printed only once every input is known to be good, so that an error
  // is always the one line on stderr.
  std::vector<std::string> warnings;
};

// run.c's flag rules: temperature < 0 becomes 0, top-p outside [0,1] becomes 0.9 (each with
// a warning here), a seed of 0 or below means "from the clock".
Status parse_sampling(const RunOptions& o, Sampling* out) {
  POCKETLM_TRY(parse_float("-t", o.temperature, &out->params.temperature));
  if (out->params.temperature < 0.0f) {
    out->warnings.push_back("-t: temperature " + o.temperature + " is negative; using 0 (greedy), as llama2.c does");
    out->params.temperature = 0.0f;
  }
  POCKETLM_TRY(parse_float("-p", o.topp, &out->params.topp));
  if (out->params.topp < 0.0f || out->params.topp > 1.0f) {
    out->warnings.push_back("-p: top-p " + o.topp + " is outside [0, 1]; using 0.9, as llama2.c does");
    out->params.topp = 0.9f;
  }
  bool from_clock = false;
  POCKETLM_TRY(parse_seed("-s", o.seed, &out->params.seed, &from_clock));
  if (from_clock) out->params.seed = static_cast<unsigned int>(std::time(nullptr));
  long long steps = 0;
  if (o.steps.empty()) {
    steps = 256;  // run.c's default, clamped to seq_len without a warning
  } else {
    POCKETLM_TRY(parse_int("-n", o.steps, 0, INT32_MAX, &steps));
  }
  out->steps = static_cast<int>(steps);
  return Status();
}

}  // namespace

int run_run(const RunOptions& o) {
  if (o.mode == "chat") {
    std::fprintf(stderr, "pocketlm: -m chat is not supported yet\n");
    return kExitUnsupported;
  }
  if (o.mode != "generate") return fail("-m: unknown mode '" + o.mode + "' (expected generate or chat)");

  Sampling sampling;
  Status st = parse_sampling(o, &sampling);
  if (!st.ok()) return fail(st);
  SessionOptions options;
  st = parse_memory_flags(o.seq_len, o.heap, &options);
  if (!st.ok()) return fail(st);
  long long threads = 1;
  st = parse_int("--threads", o.threads, 1, 256, &threads);
  if (!st.ok()) return fail(st);
  // The pool is made here, by the platform, and lent to the session (the engine has no threads).
  std::unique_ptr<ThreadPool> pool;
  if (threads > 1) pool = std::make_unique<ThreadPool>(static_cast<int>(threads));
  options.parallel = pool.get();
  options.clock = monotonic_seconds;
  if (!o.kernels.empty()) {
    options.kernels = find_kernels(o.kernels.c_str());
    if (!options.kernels) return fail("--kernels: backend '" + o.kernels + "' is not available on this machine");
  }

  FileStorage model, tokenizer;
  st = model.open(o.model.c_str(), "model");
  if (!st.ok()) return fail(st);
  st = tokenizer.open(o.tokenizer.c_str(), "tokenizer");
  if (!st.ok()) return fail(st);

  Session session;
  st = session.open(model, tokenizer, options);
  if (!st.ok()) {
    // Over --heap: show where the bytes go before the one-line error.
    if (st.code() == StatusCode::kOutOfMemory && session.plan().size() > 0 && !session.plan().fits())
      print_plan(session.plan(), stderr);
    return fail(st);
  }

  int steps = sampling.steps;
  if (steps > session.seq_len() && !o.steps.empty())
    sampling.warnings.push_back("-n: " + std::to_string(steps) + " steps exceed seq_len " +
                                std::to_string(session.seq_len()) + "; using " + std::to_string(session.seq_len()) +
                                ", as llama2.c does");
  if (steps == 0 || steps > session.seq_len()) steps = session.seq_len();

  const std::string& text = o.prompt;
  std::vector<std::int32_t> prompt(text.size() + 3);
  int n_prompt = 0;
  st = session.encode(text.c_str(), text.size(), prompt.data(), prompt.size(), &n_prompt);
  if (!st.ok()) return fail(st);

  OutputFile log_file;
  if (!o.token_log.empty()) {
    st = log_file.open(o.token_log, "--token-log");
    if (!st.ok()) return fail(st);
  }
  for (const std::string& w : sampling.warnings) warn(w);
  std::vector<std::int32_t> log;
  log.reserve(static_cast<std::size_t>(steps) + 1);
  Utf8Stream out(write_stdout, nullptr);
  RunContext ctx{&session.tokenizer(), &out, &log};
  GenerateStats stats;
  st = session.generate(prompt.data(), n_prompt, steps, sampling.params, on_token, &ctx, &stats);
  if (!st.ok()) return fail(st);
  out.flush();
  std::printf("\n");
  std::fflush(stdout);

  if (stats.prefill_passes + stats.decode_passes > 1)
    std::fprintf(stderr, "achieved tok/s: %f\n", stats.achieved_tok_per_s);
  std::fprintf(stderr,
               "pocketlm: prompt %d tokens, generated %d tokens, prefill %.1f tok/s, decode %.1f tok/s, "
               "model memory %llu bytes, kernels %s, threads %d\n",
               stats.prompt_tokens, stats.decode_passes, stats.prefill_tok_per_s(), stats.decode_tok_per_s(),
               static_cast<unsigned long long>(session.arena_bytes()), session.kernels().name, session.threads());

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
