// Helpers shared by the CLI commands: strict number parsing with one-line errors that name
// the flag and the value, and reporting a Status the way every command does.
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

#include "pocketlm/base/status.h"
#include "pocketlm/memory/memory_plan.h"
#include "pocketlm/runtime/session.h"
#include "device_catalog.h"
#include "ports/posix/file_storage.h"
#include "ports/posix/huge_pages.h"
#include "ports/posix/thread_pool.h"
#include "ports/posix/thread_read_queue.h"

namespace pocketlm::cli {

// Exit codes: 0 success, 1 bad input or failure, 2 a valid request not supported yet.
inline constexpr int kExitOk = 0;
inline constexpr int kExitError = 1;
inline constexpr int kExitUnsupported = 2;

// Prints "pocketlm: error: <message>" to stderr and returns kExitError.
int fail(const Status& status);
int fail(const std::string& message);
// Prints "pocketlm: warning: <message>" to stderr.
void warn(const std::string& message);

// "1 turn", "2 turns": n with its noun in the number n takes (plural: singular + "s" unless
// given, as "stories").
std::string counted(std::uint64_t n, const char* singular, const char* plural = nullptr);

// The kind's own hyperparameters of `spec` as its architecture names them, each as
// ", <name> <value>" (", per_layer_dim 128"); "" for a kind without any.
std::string kind_params_text(const ModelSpec& spec);

// printf of up to five doubles into a string (bench's rows; at most 159 characters).
std::string fmt(const char* format, double a, double b = 0, double c = 0, double d = 0, double e = 0);

// Parses a whole string as a finite float / an integer in range; errors name `flag`.
Status parse_float(const char* flag, const std::string& text, float* out);
Status parse_int(const char* flag, const std::string& text, long long min, long long max, long long* out);
// A seed: a decimal integer in [-2^63, 2^64 - 1].
Status parse_seed(const char* flag, const std::string& text, std::uint64_t* out, bool* negative_or_zero);

// Bytes of --heap kept for the pocketlm process itself on the host (see parse_memory_flags):
// its resident size without the arena, measured as peak RSS minus arena (bench/peak-rss.sh)
// at 3.4-3.5 MiB for the static Release binary (`--version` alone: 3.3 MiB), with a margin.
// tests/peak_rss_test.cpp fails when the process outgrows it.
inline constexpr std::uint64_t kHostProcessReserveBytes = 4096 * 1024;

// Fills options->seq_len, options->budget_bytes and options->device from --seq-len, --heap
// (empty: none) and --device (empty: the host; unknown: an error listing the profiles) or
// --device-file (a board's profile in JSON, device_catalog.h; not with --device).
Status parse_memory_flags(const std::string& seq_len, const std::string& heap, const std::string& device,
                          const std::string& device_file, SessionOptions* options);
// The profile named by --device or read from --device-file (nullptr for neither).
Status find_device_flag(const std::string& device, const std::string& device_file, const DeviceProfile** out);

// --kv f32|f16 into options->kv.
Status parse_kv_flag(const std::string& kv, SessionOptions* options);

// What the host lends a session: worker threads and a read thread for weights kept in storage.
struct HostResources {
  std::unique_ptr<ThreadPool> pool;
  std::unique_ptr<ThreadReadQueue> reads;
};
// Fills options->kernels (empty name: the default backend) and the host's clock; with
// `resources`, makes a ThreadPool of --threads workers (when more than 1) and, unless the
// device's storage reads cannot overlap compute (the PSP's), a read thread, and lends them to
// the session; without, --threads is only checked (plan: threads take no arena bytes). Call
// after parse_memory_flags. An unknown or unavailable backend is an error listing the ones
// this machine has.
Status parse_backend_flags(const std::string& kernels, const std::string& threads, SessionOptions* options,
                           HostResources* resources);
// "reference|tiled4|avx2": every backend compiled in, for --help.
std::string kernel_choices();

// -z for run, plan, bench, eval, chat and console: the file given; else, for a GGUF model, the
// tokenizer it carries (*use = nullptr); else run.c's default tokenizer.bin. Reads the model's
// header first, so that a bad model file is diagnosed before any tokenizer is looked for.
// Opens `storage` when a file is used. *label is what the summary lines print; *warning (else
// empty) says that -z replaces the model's own tokenizer, for warn() once the session opened
// (so that an error stays the only line).
Status open_tokenizer(const std::string& flag_value, Storage& model, FileStorage* storage, Storage** use,
                      std::string* label, std::string* warning);
inline constexpr const char* kTokenizerHelp =
    "tokenizer.bin path (default: the model's own tokenizer for a GGUF model, else tokenizer.bin)";

// The files a command runs a model from: the model and, unless it carries its own, a tokenizer.
struct ModelFiles {
  FileStorage model, tokenizer_file;
  Storage* tokenizer = nullptr;   // nullptr: the model's own (GGUF)
  std::string tokenizer_label;    // what the summary lines print
  std::string tokenizer_warning;  // -z replaces the model's own: for warn() once all went well
  // The session's arena blocks in huge pages (open_session), by RAM tier: declared before the
  // Session that borrows them, a ModelFiles outlives it.
  HugePageBlock arena[MemoryPlan::kMaxTiers];
  // Opens the model at `path`, then its tokenizer (open_tokenizer, `z` as -z).
  Status open(const std::string& path, const std::string& z);
};
// session->open() over `files`; over budget, the plan is printed to stderr first, so that the
// one-line error can be read against it. A RAM tier of at least kHugeArenaBytes that the
// options do not already give a buffer gets one in huge pages through the session's
// tier_allocator, once its plan is made (files.arena: the host port's lever for decode from
// DRAM, docs/performance.md); the engine borrows it.
inline constexpr std::uint64_t kHugeArenaBytes = std::uint64_t{16} << 20;
Status open_session(ModelFiles& files, const SessionOptions& options, Session* session);

// The whole of the regular file at `path` into *out. A missing file, a directory or a FIFO is
// a one-line error (FileStorage's, `what` naming the file's role: "text", "--osk"), as is a
// file too large for memory: nothing here throws.
Status read_whole_file(const std::string& path, const char* what, std::string* out);

// A text input: "-" is stdin, a pipe or FIFO (`<(...)`) is read to its end, anything else as
// read_whole_file. `what` names it in errors ("text").
Status read_text_input(const std::string& path, const char* what, std::string* out);

// The CPU's name for errors about it ("AMD EPYC", from /proc/cpuinfo), or "unnamed" when the
// system does not say.
std::string cpu_model_name();

// Prints a memory plan table to `out` (stdout or stderr).
void print_plan(const MemoryPlan& plan, std::FILE* out);

}  // namespace pocketlm::cli
