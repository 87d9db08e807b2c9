#include "session_flags.h"

#include <CLI/CLI.hpp>

namespace pocketlm::cli {

namespace {

constexpr unsigned kOpensSession = kCmdRun | kCmdPlan | kCmdBench | kCmdEval | kCmdChat | kCmdConsole;
// eval reads a text in windows of a host session: no budget, no device, the exact KV cache.
constexpr unsigned kBudgeted = kCmdRun | kCmdPlan | kCmdBench | kCmdChat | kCmdConsole;
constexpr unsigned kRunCSampling = kCmdRun | kCmdChat | kCmdConsole;

struct FlagRow {
  const char* name;
  std::string SessionFlags::*field;
  std::string (*type_name)(SessionCommand);  // the value's shape in --help
  const char* help;
  unsigned commands;
};

std::string file_type(SessionCommand) { return "FILE"; }
std::string size_type(SessionCommand) { return "SIZE"; }
std::string int_type(SessionCommand) { return "INT"; }
std::string float_type(SessionCommand) { return "FLOAT"; }
std::string kv_type(SessionCommand) { return "f32|f16"; }
// console draws on the profile's screen: only the profiles that have one.
std::string device_type(SessionCommand command) { return device_choices(command == kCmdConsole); }
std::string kernel_type(SessionCommand) { return kernel_choices(); }

// One row per flag; --help appends the command's default in brackets.
const FlagRow kFlags[] = {
    {"-z", &SessionFlags::tokenizer, file_type, kTokenizerHelp, kOpensSession},
    {"--heap", &SessionFlags::heap, size_type,
     "memory budget (the first RAM tier's capacity), e.g. 24M, 24MiB or 25165824; weights that do not fit stay in "
     "the model file and are read per token; over it even so: the plan, then exit 1",
     kBudgeted},
    {"--device", &SessionFlags::device, device_type,
     "device profile: its memory tiers bound the plan and its kernels are the default (see pocketlm devices)",
     kBudgeted},
    {"--device-file", &SessionFlags::device_file, file_type,
     "a board's device profile in JSON, instead of --device (the form pocketlm devices --json NAME prints)",
     kBudgeted},
    {"--kv", &SessionFlags::kv, kv_type, "KV cache element type: f32 (run.c's, exact) or f16 (half the bytes)",
     kBudgeted},
    {"--seq-len", &SessionFlags::seq_len, int_type,
     "context length in tokens, at most the model's; 0 = the model's (shorter shrinks the kv cache; eval: the window)",
     kOpensSession},
    {"--kernels", &SessionFlags::kernels, kernel_type,
     "kernel backend (default: the device's with --device, else the fastest one this CPU has; see pocketlm "
     "--version)",
     kOpensSession},
    {"--threads", &SessionFlags::threads, int_type, "worker threads for matmul rows and attention heads",
     kOpensSession},
    {"-t", &SessionFlags::temperature, float_type, "temperature, read as run.c reads it; 0 = greedy, negative = 0",
     kRunCSampling},
    {"-p", &SessionFlags::topp, float_type, "top-p in [0,1]; 0 or 1 = plain multinomial, outside = 0.9",
     kRunCSampling},
    {"-s", &SessionFlags::seed, int_type, "random seed, read as a C int as run.c does; 0 = the clock",
     kRunCSampling},
};

}  // namespace

void add_model_argument(CLI::App* cmd, std::string* model) {
  cmd->add_option("model", *model, "model: llama2.c .bin (v0/v1 fp32, v2 q80) or GGUF (F32, F16, Q8_0, Q4_0, IQ4_XS tensors)")
      ->required()
      ->type_name("FILE");
}

void add_session_flags(CLI::App* cmd, SessionCommand command, SessionFlags* flags) {
  for (const FlagRow& row : kFlags) {
    if (!(row.commands & command)) continue;
    cmd->add_option(row.name, flags->*row.field, row.help)->type_name(row.type_name(command))->capture_default_str();
  }
}

Status parse_session_flags(const SessionFlags& flags, SessionOptions* options, HostResources* resources) {
  POCKETLM_TRY(parse_memory_flags(flags.seq_len, flags.heap, flags.device, flags.device_file, options));
  POCKETLM_TRY(parse_kv_flag(flags.kv, options));
  return parse_backend_flags(flags.kernels, flags.threads, options, resources);
}

}  // namespace pocketlm::cli
