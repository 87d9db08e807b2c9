#include "cli_common.h"

#include <sys/prctl.h>
#include <sys/stat.h>

#include "pocketlm/base/byte_size.h"
#include "pocketlm/format/architecture.h"
#include "pocketlm/format/model_reader.h"
#include "ports/posix/clock.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <new>

namespace pocketlm::cli {

// The engine names the values it was given by their fields (base/status.h); the CLI by its flags.
constexpr FieldName kFlagNames[] = {
    {"seq_len", "--seq-len"}, {"text", "-i"},          {"steps", "-n"},
    {"seed", "-s"},           {"kernels", "--kernels"}, {"prefill_batch", "--prefill-batch"},
};

int fail(const Status& status) {
  char message[Status::kMaxMessage + 32];
  rename_field(status.message(), kFlagNames, static_cast<int>(std::size(kFlagNames)), message, sizeof message);
  std::fprintf(stderr, "pocketlm: error: %s\n", message);
  return kExitError;
}

int fail(const std::string& message) {
  std::fprintf(stderr, "pocketlm: error: %s\n", message.c_str());
  return kExitError;
}

void warn(const std::string& message) { std::fprintf(stderr, "pocketlm: warning: %s\n", message.c_str()); }

std::string counted(std::uint64_t n, const char* singular, const char* plural) {
  return std::to_string(n) + " " + (n == 1 ? singular : plural ? plural : std::string(singular) + "s");
}

std::string kind_params_text(const ModelSpec& spec) {
  std::string out;
  const Architecture* a = find_architecture(spec.architecture);
  for (int i = 0; a && i < a->key_count; ++i)
    if (a->keys[i].field >= ConfigField::kKindParam0)
      out += std::string(", ") + config_field_name(*a, a->keys[i].field) + " " +
             std::to_string(config_value(spec.config, a->keys[i].field));
  return out;
}

std::string fmt(const char* format, double a, double b, double c, double d, double e) {
  char buf[160];
  std::snprintf(buf, sizeof buf, format, a, b, c, d, e);
  return buf;
}

Status parse_float(const char* flag, const std::string& text, float* out) {
  errno = 0;
  char* end = nullptr;
  const float v = std::strtof(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size())
    return Status::error(StatusCode::kInvalidArgument, "%s: '%s' is not a number", flag, text.c_str());
  if (errno == ERANGE)  // overflows to infinity or underflows below the smallest normal float
    return Status::error(StatusCode::kInvalidArgument, "%s: '%s' is outside the range of a float", flag,
                         text.c_str());
  if (!std::isfinite(v))
    return Status::error(StatusCode::kInvalidArgument, "%s: '%s' is not a finite number", flag, text.c_str());
  *out = v;
  return Status();
}

Status parse_int(const char* flag, const std::string& text, long long min, long long max, long long* out) {
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || end != text.c_str() + text.size())
    return Status::error(StatusCode::kInvalidArgument, "%s: '%s' is not an integer", flag, text.c_str());
  if (errno == ERANGE || v < min || v > max)
    return Status::error(StatusCode::kInvalidArgument, "%s: %s is outside [%lld, %lld]", flag, text.c_str(), min, max);
  *out = v;
  return Status();
}

Status parse_seed(const char* flag, const std::string& text, std::uint64_t* out, bool* negative_or_zero) {
  const bool negative = !text.empty() && text[0] == '-';
  errno = 0;
  char* end = nullptr;
  if (negative) {
    const long long v = std::strtoll(text.c_str(), &end, 10);
    if (end != text.c_str() + text.size() || text.size() == 1)
      return Status::error(StatusCode::kInvalidArgument, "%s: '%s' is not an integer", flag, text.c_str());
    if (errno == ERANGE)
      return Status::error(StatusCode::kInvalidArgument, "%s: %s is below -2^63", flag, text.c_str());
    *out = static_cast<std::uint64_t>(v);
    *negative_or_zero = true;
    return Status();
  }
  const unsigned long long v = std::strtoull(text.c_str(), &end, 10);
  if (text.empty() || end != text.c_str() + text.size() || text[0] == '+' || text[0] == ' ')
    return Status::error(StatusCode::kInvalidArgument, "%s: '%s' is not an integer", flag, text.c_str());
  if (errno == ERANGE)
    return Status::error(StatusCode::kInvalidArgument, "%s: %s is above 2^64 - 1", flag, text.c_str());
  *out = v;
  *negative_or_zero = v == 0;
  return Status();
}

Status find_device_flag(const std::string& device, const std::string& device_file, const DeviceProfile** out) {
  *out = nullptr;
  if (!device.empty() && !device_file.empty())
    return Status::error(StatusCode::kInvalidArgument, "--device %s and --device-file %s: give one of them",
                         device.c_str(), device_file.c_str());
  if (!device_file.empty()) {
    // Kept for the whole process: the session holds the profile's pointers. A command that
    // asks twice (console: the plan, then the session) gets the profile read the first time.
    static DeviceCatalog user_boards;
    static std::vector<std::pair<std::string, const DeviceProfile*>> loaded;
    for (const auto& [path, profile] : loaded)
      if (path == device_file) {
        *out = profile;
        return Status();
      }
    POCKETLM_TRY(user_boards.add_file(device_file, out));
    loaded.emplace_back(device_file, *out);
    if (DeviceCatalog::builtin().find((*out)->name))  // a plan's header would not tell them apart
      return Status::error(StatusCode::kInvalidArgument, "%s: name: '%s' is a built-in profile; give the board a name "
                           "of its own", device_file.c_str(), (*out)->name);
    return Status();
  }
  if (device.empty()) return Status();
  *out = DeviceCatalog::builtin().find(device);
  if (*out) return Status();
  std::string names = device_choices();
  for (char& c : names) c = c == '|' ? ',' : c;
  return Status::error(StatusCode::kInvalidArgument, "--device: '%s' is not a device profile (profiles: %s; see "
                       "pocketlm devices, or give a board's profile with --device-file)", device.c_str(), names.c_str());
}

Status parse_memory_flags(const std::string& seq_len, const std::string& heap, const std::string& device,
                          const std::string& device_file, SessionOptions* options) {
  long long n = 0;
  POCKETLM_TRY(parse_int("--seq-len", seq_len, 0, INT32_MAX, &n));
  options->seq_len = static_cast<int>(n);
  POCKETLM_TRY(find_device_flag(device, device_file, &options->device));
  const bool on_host = !options->device || std::string(options->device->name) == "host";
  if (!heap.empty()) {
    POCKETLM_TRY(parse_byte_size("--heap", heap.c_str(), &options->budget_bytes));
    // On the host --heap bounds the whole process, as a heap on a device does: the program's
    // own resident memory (static binary, stacks, libc, the read thread) is not the arena's.
    // With a device it is that device's first RAM tier, which this process does not live in.
    if (on_host) options->reserve_bytes = kHostProcessReserveBytes;
  }
  // A bounded plan is the process's RSS only in 4 KiB pages: a transparent huge page would
  // round the arena up by up to 2 MiB.
  if (!heap.empty() || !on_host) ::prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0);
  return Status();
}

Status parse_backend_flags(const std::string& kernels, const std::string& threads, SessionOptions* options,
                           HostResources* resources) {
  long long n = 0;
  POCKETLM_TRY(parse_int("--threads", threads, 1, 256, &n));
  // The host lends the session its threads, clock and a read thread (the engine has none).
  options->clock = monotonic_ticks;
  options->clock_ticks_per_second = kMonotonicTicksPerSecond;
  if (resources && n > 1) {
    resources->pool = std::make_unique<ThreadPool>(static_cast<int>(n));
    options->parallel = resources->pool.get();
  }
  const DeviceTier* storage = options->device ? storage_tier(*options->device) : nullptr;
  if (resources && (!storage || storage->reads_overlap_compute)) {
    resources->reads = std::make_unique<ThreadReadQueue>();
    options->read_queue = resources->reads.get();
  }
  if (kernels.empty()) return Status();
  options->kernels = find_kernels(kernels.c_str());
  if (options->kernels) return Status();
  std::string available;
  for (const char* const* name = kernel_names(); *name; ++name) {
    if (!find_kernels(*name)) continue;
    if (!available.empty()) available += ", ";
    available += *name;
  }
  return Status::error(StatusCode::kInvalidArgument, "--kernels: backend '%s' is not available on this machine "
                       "(available: %s)", kernels.c_str(), available.c_str());
}

Status parse_kv_flag(const std::string& kv, SessionOptions* options) {
  if (kv == "f32" || kv == "f16") {
    options->kv = kv == "f16" ? KvType::kF16 : KvType::kF32;
    return Status();
  }
  return Status::error(StatusCode::kInvalidArgument, "--kv: '%s' is not a KV cache type (f32 or f16)", kv.c_str());
}

std::string kernel_choices() {
  std::string choices;
  for (const char* const* name = kernel_names(); *name; ++name) {
    if (!choices.empty()) choices += '|';
    choices += *name;
  }
  return choices;
}

Status open_tokenizer(const std::string& flag_value, Storage& model, FileStorage* storage, Storage** use,
                      std::string* label, std::string* warning) {
  // The model first: a web page, an LFS pointer or a PyTorch file given as the model is named
  // as such (format/file_kind.h) before a missing ./tokenizer.bin could hide it.
  ModelSpec spec;
  POCKETLM_TRY(read_model_spec(model, &spec));
  std::string path = flag_value;
  if (path.empty()) {
    if (spec.format == ModelFormat::kGguf) {  // its own tokenizer (the session says if it has none)
      *use = nullptr;
      *label = "(the model's own)";
      return Status();
    }
    path = "tokenizer.bin";  // run.c's default
  }
  POCKETLM_TRY(storage->open(path.c_str(), "tokenizer"));
  // -z wins, as asked; say so, since the model's own vocabulary is the one it was trained with.
  warning->clear();
  if (spec.tokenizer.present)
    *warning = "-z: using the tokenizer " + path + "; " + model.name() + "'s own tokenizer is ignored";
  *use = storage;
  *label = path;
  return Status();
}

Status ModelFiles::open(const std::string& path, const std::string& z) {
  POCKETLM_TRY(model.open(path.c_str(), "model"));
  return open_tokenizer(z, model, &tokenizer_file, &tokenizer, &tokenizer_label, &tokenizer_warning);
}

namespace {

// SessionOptions::tier_allocator: a RAM tier of kHugeArenaBytes or more in huge pages, held by the
// ModelFiles (ctx) for the session's life; smaller tiers (and a refused block) the session
// allocates itself.
void* huge_page_tier(void* ctx, int tier, std::size_t bytes) {
  if (bytes < kHugeArenaBytes || tier < 0 || tier >= MemoryPlan::kMaxTiers) return nullptr;
  HugePageBlock& block = static_cast<ModelFiles*>(ctx)->arena[tier];
  return block.allocate(bytes) ? block.data() : nullptr;
}

}  // namespace

Status open_session(ModelFiles& files, const SessionOptions& options, Session* session) {
  SessionOptions o = options;
  if (!o.tier_allocator) {
    o.tier_allocator = huge_page_tier;
    o.tier_allocator_ctx = &files;
  }
  const Status st = session->open(files.model, files.tokenizer, o);
  if (st.code() == StatusCode::kOutOfMemory && session->plan().size() > 0 && !session->plan().fits())
    print_plan(session->plan(), stderr);
  return st;
}

Status read_whole_file(const std::string& path, const char* what, std::string* out) {
  FileStorage f;
  POCKETLM_TRY(f.open(path.c_str(), what));
  if (f.size() > out->max_size())
    return Status::error(StatusCode::kOutOfMemory, "%s: %s file of %llu bytes is larger than this machine can hold",
                         f.name(), what, static_cast<unsigned long long>(f.size()));
  try {
    out->resize(static_cast<std::size_t>(f.size()));
  } catch (const std::bad_alloc&) {
    return Status::error(StatusCode::kOutOfMemory, "%s: no memory to read the %s file (%llu bytes)", f.name(), what,
                         static_cast<unsigned long long>(f.size()));
  }
  return f.read(0, out->data(), out->size());
}

void print_plan(const MemoryPlan& plan, std::FILE* out) {
  plan.render([](const char* line, void* ctx) { std::fprintf(static_cast<std::FILE*>(ctx), "%s\n", line); }, out);
}

Status read_text_input(const std::string& path, const char* what, std::string* out) {
  struct stat st;
  const bool stream = path == "-" || (::stat(path.c_str(), &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode)));
  if (!stream) return read_whole_file(path, what, out);
  std::FILE* f = path == "-" ? stdin : std::fopen(path.c_str(), "rb");
  if (!f)
    return Status::error(StatusCode::kIoError, "%s: cannot open %s file: %s", path.c_str(), what, std::strerror(errno));
  out->clear();
  char buf[1 << 16];
  std::size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) out->append(buf, n);
  const bool failed = std::ferror(f) != 0;
  const int err = errno;
  if (f != stdin) std::fclose(f);
  if (failed)
    return Status::error(StatusCode::kIoError, "%s: reading the %s failed: %s", path.c_str(), what, std::strerror(err));
  return Status();
}

std::string cpu_model_name() {
  // /proc files have no size (stat says 0): read line by line. x86 says "model name", MIPS
  // "cpu model", 32-bit Arm "Processor".
  std::FILE* f = std::fopen("/proc/cpuinfo", "r");
  if (!f) return "unnamed";
  std::string name;
  char line[512];
  while (name.empty() && std::fgets(line, sizeof line, f)) {
    const std::string l = line;
    const std::size_t colon = l.find(':');
    if (colon == std::string::npos) continue;
    const std::string key = l.substr(0, l.find_last_not_of(" \t", colon - 1) + 1);
    if (key != "model name" && key != "cpu model" && key != "Processor") continue;
    name = l.substr(colon + 1);
    while (!name.empty() && (name.front() == ' ' || name.front() == '\t')) name.erase(0, 1);
    while (!name.empty() && (name.back() == '\n' || name.back() == ' ')) name.pop_back();
  }
  std::fclose(f);
  return name.empty() ? "unnamed" : name;
}

}  // namespace pocketlm::cli
