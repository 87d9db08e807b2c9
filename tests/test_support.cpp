#include "test_support.h"

#include <dirent.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "pocketlm/format/model_reader.h"
#include "pocketlm/io/memory_storage.h"
#include "pocketlm/memory/memory_plan.h"

extern char** environ;

namespace pocketlm::test {

namespace {

std::string env_or_empty(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? v : "";
}

struct PublicModel {
  std::string name, sha256, source;  // source: a URL, or "convert:FROM"
};

// tests/public-models.txt, the pins scripts/get-models downloads by (read on each call: a
// test asks a few times at most).
std::vector<PublicModel> public_models() {
  std::vector<PublicModel> models;
  std::ifstream in(POCKETLM_PUBLIC_MODELS);
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    PublicModel m;
    if (fields >> m.name >> m.sha256 >> m.source) models.push_back(m);
  }
  return models;
}

// The public model that `file` ("models/NAME") names, or nullptr.
const PublicModel* public_model(const std::vector<PublicModel>& models, const std::string& file) {
  for (const PublicModel& m : models)
    if (file == "models/" + m.name) return &m;
  return nullptr;
}

}  // namespace

std::string shared_dir() {
  const std::string env = env_or_empty("POCKETLM_SHARED");
  return !env.empty() ? env : POCKETLM_DEFAULT_SHARED;
}

std::string cache_dir() {
  if (std::string dir = env_or_empty("POCKETLM_CACHE"); !dir.empty()) return dir;
  if (std::string xdg = env_or_empty("XDG_CACHE_HOME"); !xdg.empty()) return xdg + "/pocketlm";
  if (std::string home = env_or_empty("HOME"); !home.empty()) return home + "/.cache/pocketlm";
  return "";
}

std::string find_file(const std::string& file) {
  if (const std::string in_shared = shared_dir() + "/" + file; file_exists(in_shared)) return in_shared;
  // Only the public models are downloaded; the cache holds them under their bare names.
  const std::vector<PublicModel> models = public_models();
  const PublicModel* m = public_model(models, file);
  const std::string cache = cache_dir();
  if (m && !cache.empty() && file_exists(cache + "/" + m->name)) return cache + "/" + m->name;
  return "";
}

std::string missing_file_reason(const std::string& file) {
  const std::vector<PublicModel> models = public_models();
  const PublicModel* m = public_model(models, file);
  if (!m)
    return file + " is missing: it is not public (docs/sources.md) and comes only with shared/, which is not at " +
           shared_dir() + " (../shared beside the checkout, or set POCKETLM_SHARED)";
  const std::string where = "neither in " + shared_dir() + "/models nor in the download cache " + cache_dir();
  const std::string how = m->source.rfind("convert:", 0) == 0
                              ? "makes it from " + m->source.substr(8) + " with pocketlm convert --to q80"
                              : "downloads it from " + m->source;
  return file + " is missing: " + where + "; scripts/get-models --tests (make test runs it) " + how;
}

std::string pinned_sha256(const std::string& name) {
  for (const PublicModel& m : public_models())
    if (m.name == name) return m.sha256;
  return "";
}

std::string first_missing(std::initializer_list<std::string> files) {
  for (const std::string& f : files)
    if (!f.empty() && find_file(f).empty()) return missing_file_reason(f);
  return "";
}

std::string model_path(const std::string& name) {
  const std::string found = find_file("models/" + name);
  return !found.empty() ? found : shared_dir() + "/models/" + name;
}

std::string pocketlm_binary() { return POCKETLM_BINARY; }

namespace {

// The command the target's programs run under: POCKETLM_TEST_EMULATOR when set (the host
// build run as another CPU, `qemu-x86_64 -cpu Haswell`: scripts/test-cpu), else the cross
// build's emulator (qemu-user), else none.
std::string emulator_command() {
  if (const char* e = std::getenv("POCKETLM_TEST_EMULATOR"); e && *e) return e;
#ifdef POCKETLM_EMULATOR
  return POCKETLM_EMULATOR;
#else
  return "";
#endif
}

}  // namespace

std::string emulator_prefix() {
  const std::string e = emulator_command();
  return e.empty() ? e : e + " ";
}

namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

struct TempRoot {
  std::string path;
  TempRoot() {
    char templ[] = "/tmp/pocketlm-test-XXXXXX";
    if (!::mkdtemp(templ)) throw std::runtime_error("mkdtemp failed");
    path = templ;
  }
  ~TempRoot() {
    std::string cmd = "rm -rf '" + path + "'";
    if (std::system(cmd.c_str()) != 0) std::fprintf(stderr, "could not remove %s\n", path.c_str());
  }
};

TempRoot& temp_root() {
  static TempRoot root;
  return root;
}

}  // namespace

std::string temp_dir() {
  static int counter = 0;
  std::string dir = temp_root().path + "/" + std::to_string(counter++);
  ::mkdir(dir.c_str(), 0755);
  return dir;
}

CommandResult run_pocketlm(const std::vector<std::string>& args) { return run_pocketlm_with_input(args, "/dev/null"); }

CommandResult run_pocketlm_with_fifo(const std::vector<std::string>& args, const std::string& fifo, int seconds,
                                     bool* in_time) {
  // O_CLOEXEC: pocketlm must not inherit our end, or it would be a writer to itself and never
  // see end-of-file.
  const int fd = ::open(fifo.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    CommandResult r;
    r.err = "cannot open the FIFO " + fifo;
    *in_time = false;
    return r;
  }
  std::mutex m;
  std::condition_variable cv;
  bool done = false;
  std::thread watchdog([&] {
    std::unique_lock<std::mutex> lock(m);
    cv.wait_for(lock, std::chrono::seconds(seconds), [&] { return done; });
    ::close(fd);
  });
  const auto start = std::chrono::steady_clock::now();
  const CommandResult r = run_pocketlm(args);
  *in_time = std::chrono::steady_clock::now() - start < std::chrono::seconds(seconds);
  {
    std::lock_guard<std::mutex> lock(m);
    done = true;
  }
  cv.notify_one();
  watchdog.join();
  return r;
}

CommandResult run_pocketlm_with_input(const std::vector<std::string>& args, const std::string& stdin_path) {
  const std::string dir = temp_dir();
  const std::string out_path = dir + "/stdout", err_path = dir + "/stderr";
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, stdin_path.c_str(), O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::vector<std::string> argv_storage;
  // Cross builds and emulated CPUs: run the binary through the emulator (space-separated).
  const std::string emulator = emulator_command();
  for (std::size_t i = 0; i < emulator.size();) {
    std::size_t e = emulator.find(' ', i);
    if (e == std::string::npos) e = emulator.size();
    if (e > i) argv_storage.push_back(emulator.substr(i, e - i));
    i = e + 1;
  }
  argv_storage.push_back(pocketlm_binary());
  argv_storage.insert(argv_storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_storage) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  CommandResult result;
  if (posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), environ) != 0) {
    posix_spawn_file_actions_destroy(&actions);
    result.err = "posix_spawn failed";
    return result;
  }
  posix_spawn_file_actions_destroy(&actions);
  int status = 0;
  ::waitpid(pid, &status, 0);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  result.out = slurp(out_path);
  result.err = slurp(err_path);
#if defined(__SANITIZE_ADDRESS__)
  // make test-sanitize runs with allocator_may_return_null=1, and ASan then notes every
  // refused allocation ("==PID==WARNING: AddressSanitizer failed to allocate N bytes") on
  // stderr before pocketlm reports the refusal itself; the tests judge pocketlm's lines.
  std::string kept;
  for (std::size_t i = 0; i < result.err.size();) {
    std::size_t e = result.err.find('\n', i);
    e = e == std::string::npos ? result.err.size() : e + 1;
    const std::string line = result.err.substr(i, e - i);
    if (!(line.rfind("==", 0) == 0 && line.find("WARNING: AddressSanitizer failed to allocate") != std::string::npos))
      kept += line;
    i = e;
  }
  result.err = kept;
#endif
  return result;
}

std::vector<unsigned char> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<unsigned char>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::string read_text(const std::string& path) {
  const std::vector<unsigned char> bytes = read_file(path);
  return std::string(bytes.begin(), bytes.end());
}

void write_file(const std::string& path, const std::vector<unsigned char>& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

std::vector<std::string> directory_entries(const std::string& dir) {
  std::vector<std::string> names;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (const dirent* e = ::readdir(d)) {
      const std::string name = e->d_name;
      if (name != "." && name != "..") names.push_back(name);
    }
    ::closedir(d);
  }
  return names;
}

bool file_exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

std::string sha256_of(const std::string& path) {
  std::string cmd = "sha256sum '" + path + "'";
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) return "";
  char buf[128] = {};
  std::string hex;
  if (std::fgets(buf, sizeof buf, p)) hex = std::string(buf).substr(0, 64);
  ::pclose(p);
  return hex;
}

std::string stories260k_gguf(const std::string& type) {
  const std::string out = temp_dir() + "/s260k_" + type + ".gguf";
  const CommandResult r = run_pocketlm({"convert", model_path("stories260K.bin"), "--to", "gguf", "--type", type, "-z",
                                        model_path("tok512.bin"), "-o", out});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return out;
}

void put_i32(std::vector<unsigned char>& out, std::int32_t v) {
  unsigned char b[4];
  std::memcpy(b, &v, 4);
  out.insert(out.end(), b, b + 4);
}

void put_f32(std::vector<unsigned char>& out, float v) {
  unsigned char b[4];
  std::memcpy(b, &v, 4);
  out.insert(out.end(), b, b + 4);
}

Status VectorSink::write(const void* data, std::size_t bytes) {
  const auto* p = static_cast<const unsigned char*>(data);
  bytes_.insert(bytes_.end(), p, p + bytes);
  return Status();
}

std::string float_bits_hex(float v) {
  std::uint32_t bits = 0;
  std::memcpy(&bits, &v, 4);
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08X", static_cast<unsigned>(bits));
  return buf;
}

LoadedModel::LoadedModel(Storage& storage, const ModelSpec& spec, int seq_len, const Kernels& kernels,
                         int prefill_batch) {
  const ModelKind* kind = nullptr;
  const Status found = find_model_kind(storage.name(), spec, &kind);
  EXPECT_TRUE(found.ok()) << found.message();
  if (!kind) return;
  MemoryPlan plan;
  Arena measuring;
  measuring.init_measuring(&plan);
  Model* sizing = kind->construct(memory_);
  Status st = sizing->carve(spec, seq_len, kernels, WeightPlacement{}, KvType::kF32, measuring);
  if (st.ok()) st = sizing->carve_prefill(prefill_batch, measuring);
  sizing->~Model();
  if (st.ok()) st = arena_.init_owned(measuring.used());
  if (!st.ok()) {
    ADD_FAILURE() << st.message();
    return;
  }
  model = kind->construct(memory_);
  st = model->carve(spec, seq_len, kernels, WeightPlacement{}, KvType::kF32, arena_);
  if (st.ok()) st = model->carve_prefill(prefill_batch, arena_);
  if (st.ok()) st = model->load(storage, 4096, nullptr);
  if (!st.ok()) {
    ADD_FAILURE() << st.message();
    model->~Model();
    model = nullptr;
  }
}

std::vector<float> logits_of_file(const std::vector<unsigned char>& file, std::initializer_list<int> tokens) {
  MemoryStorage storage(file.data(), file.size(), "m.gguf");
  ModelSpec spec;
  EXPECT_TRUE(read_model_spec(storage, &spec).ok());
  LoadedModel loaded(storage, spec, 16, reference_kernels());
  if (!loaded.model) return {};
  std::vector<float> out;
  int pos = 0;
  for (int token : tokens) {
    const float* l = loaded.model->forward(token, pos++);
    out.insert(out.end(), l, l + spec.config.vocab_size);
  }
  return out;
}

LoadedModel::~LoadedModel() {
  if (model) model->~Model();
}

}  // namespace pocketlm::test
