// The pocketlm subcommands. Each registers its flags on a CLI11 app and runs from a plain
// options struct, so main() stays a dispatcher.
#pragma once

#include <string>

#include "session_flags.h"

namespace CLI {
class App;
}

namespace pocketlm::cli {

struct RunOptions : SessionFlags {
  std::string model;
  std::string steps;  // empty: 256, as run.c
  std::string prompt;
  bool has_prompt = false;
  std::string prompt_file;  // -f: the prompt read from a file ("-": stdin)
  std::string mode = "generate";
  std::string system_prompt;
  std::string token_log;
  int samples = 1;  // --samples: independent samples, seeds -s, -s + 1, ...
};
void add_run_command(CLI::App& app, RunOptions& options);
int run_run(const RunOptions& options);

struct PlanOptions : SessionFlags {
  std::string model;
  bool json = false;
};
void add_plan_command(CLI::App& app, PlanOptions& options);
int run_plan(const PlanOptions& options);

struct InspectOptions {
  std::string model;
};
void add_inspect_command(CLI::App& app, InspectOptions& options);
int run_inspect(const InspectOptions& options);

struct SynthOptions {
  std::string shape;  // stories260K, stories15M, stories42M or stories110M
  std::string seed;
  std::string output;
};
void add_synth_command(CLI::App& app, SynthOptions& options);
int run_synth(const SynthOptions& options);

struct ConvertOptions {
  std::string input;
  std::string to;          // "q80" or "gguf"
  std::string type;        // gguf: f32 (default), f16, q8_0, q4_0, iq4_xs
  std::string tokenizer;   // gguf: tokenizer.bin to embed
  std::string group_size;  // empty: chosen from dim and hidden_dim
  std::string output;
  std::vector<std::string> tensor_types;  // gguf: --tensor-type ROLE=TYPE
};
void add_convert_command(CLI::App& app, ConvertOptions& options);
int run_convert(const ConvertOptions& options);

struct BenchOptions : SessionFlags {
  // -t 0: greedy repeats only; -s 42: sampled repeats from a fixed seed (bench's own -t -p -s).
  BenchOptions() { temperature = "0"; seed = "42"; }
  std::string model;
  std::string steps = "256";
  std::string repeats = "5";
  std::string prompt = "Once upon a time";
  std::string prompt_tokens = "0";  // 0: the prompt as -i encodes it
  std::string prefill_batch = "0";  // 0: the plan's choice
  bool json = false;
};
void add_bench_command(CLI::App& app, BenchOptions& options);
int run_bench(const BenchOptions& options);

struct DevicesOptions {
  std::string name;  // empty: every profile
  bool json = false;
};
void add_devices_command(CLI::App& app, DevicesOptions& options);
int run_devices(const DevicesOptions& options);
struct EvalOptions : SessionFlags {
  std::string model;
  std::string text;
  std::string against;
  std::string split = "all";  // heldout: the trainer's validation stories (story_split.h)
  std::string split_seed;
  std::string stories;
  std::string stride;
  bool json = false;
};
void add_eval_command(CLI::App& app, EvalOptions& options);
int run_eval(const EvalOptions& options);

struct ChatOptions : SessionFlags {
  std::string model;
  std::string steps = "256";  // most tokens per reply; 0 = until EOS/BOS or the context is full
  std::string prompt;         // -i: the first message (then stdin)
  bool has_prompt = false;
  std::string system_prompt;  // -y
  bool has_system_prompt = false;
  std::string chat_template = "none";
  bool system_from_stdin = false;  // run -m chat without -y: the first line of stdin, as run.c
};
void add_chat_command(CLI::App& app, ChatOptions& options);
int run_chat(const ChatOptions& options);
// run -m chat: run.c's chat() (template llama2) with run's flags.
int run_chat_mode(const RunOptions& options);

struct ConsoleOptions : SessionFlags {
  ConsoleOptions() { device = "psp"; }  // a screen to draw on
  std::string model;
  std::string osk;  // file of UTF-16LE strings (text/osk_script.h)
  std::string png;  // the last frame; per-turn frames beside it
  std::string steps = "256";
  std::string system_prompt;
  std::string chat_template = "none";
};
void add_console_command(CLI::App& app, ConsoleOptions& options);
int run_console(const ConsoleOptions& options);

// Parses argv and runs the chosen command; returns the process exit code.
int run_cli(int argc, char** argv);

}  // namespace pocketlm::cli
