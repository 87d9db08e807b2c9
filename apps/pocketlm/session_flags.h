// The flags of the commands that open a session (run, plan, bench, eval, chat, console), each
// declared once in one table (session_flags.cpp: name, value type, help, which commands take
// it), so that a flag means and says the same in every command that takes it.
#pragma once

#include <string>

#include "cli_common.h"
#include "pocketlm/base/status.h"
#include "pocketlm/runtime/session.h"

namespace CLI {
class App;
}

namespace pocketlm::cli {

// The commands of the table, as bits (a row lists the commands that take its flag).
enum SessionCommand : unsigned {
  kCmdRun = 1u << 0,
  kCmdPlan = 1u << 1,
  kCmdBench = 1u << 2,
  kCmdEval = 1u << 3,
  kCmdChat = 1u << 4,
  kCmdConsole = 1u << 5,
};

// The values as given (parsed later, so that errors name the flag and the text).
struct SessionFlags {
  std::string tokenizer;        // -z; empty: the model's own (GGUF), else ./tokenizer.bin
  std::string heap;             // --heap; empty: no budget besides the device's tiers
  std::string device;           // --device; empty: the host
  std::string device_file;      // --device-file: a board's profile (JSON), instead of --device
  std::string kv = "f32";       // --kv
  std::string seq_len = "0";    // --seq-len; 0: the model's
  std::string kernels;          // --kernels; empty: the device's (tiled4), else this CPU's fastest
  std::string threads = "1";    // --threads
  // -t -p -s as run.c reads them (atof/atoi, runc_flags.h); run, chat and console. bench's
  // -t -p -s choose its sampled repeats (other defaults, strict parsing): its own flags.
  std::string temperature = "1.0";
  std::string topp = "0.9";
  std::string seed = "0";
};

// Adds the positional model argument (the first one) to `cmd`.
void add_model_argument(CLI::App* cmd, std::string* model);

// Adds to `cmd` every flag of the table that `command` takes, bound to `flags`.
void add_session_flags(CLI::App* cmd, SessionCommand command, SessionFlags* flags);

// The memory, KV and backend flags into `options`: parse_memory_flags, parse_kv_flag and
// parse_backend_flags (with `resources` as there), in that order; the first error.
Status parse_session_flags(const SessionFlags& flags, SessionOptions* options, HostResources* resources);

}  // namespace pocketlm::cli
