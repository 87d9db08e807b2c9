#include "output_file.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>

namespace pocketlm::cli {

namespace {

// The temporary paths a signal handler may remove. A handler can only call async-signal-safe
// functions and read lock-free atomics, so each path is copied into static storage and
// published by its slot's state.
constexpr int kSlots = 4;  // open OutputFiles at a time (a command has one)
constexpr std::size_t kMaxPath = 4096;
enum SlotState : int { kFree, kClaimed, kActive };
struct Slot {
  std::atomic<int> state{kFree};
  char path[kMaxPath];
};
static_assert(std::atomic<int>::is_always_lock_free, "the signal handler reads the slot states");
Slot g_slots[kSlots];
constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP};

int claim_slot(const std::string& path) {
  if (path.size() >= kMaxPath) return -1;
  for (int i = 0; i < kSlots; ++i) {
    int expected = kFree;
    if (!g_slots[i].state.compare_exchange_strong(expected, kClaimed)) continue;
    std::memcpy(g_slots[i].path, path.c_str(), path.size() + 1);
    g_slots[i].state.store(kActive, std::memory_order_release);
    return i;
  }
  return -1;  // no room: that file is then not removed by a signal, only by errors
}

void release_slot(int slot) {
  if (slot >= 0) g_slots[slot].state.store(kFree, std::memory_order_release);
}

extern "C" void remove_temporaries_and_die(int sig) {
  for (Slot& s : g_slots)
    if (s.state.load(std::memory_order_acquire) == kActive) ::unlink(s.path);
  // SA_RESETHAND restored the default action: the signal, raised again, ends the process as
  // it would have without this handler (a shell sees "killed by SIGINT", not an exit code).
  ::raise(sig);
}

// Blocks the handled signals in this thread while a temporary file exists but is not yet
// registered, so that no signal can fall between mkstemp and claim_slot.
class SignalBlock {
 public:
  SignalBlock() {
    sigset_t set;
    sigemptyset(&set);
    for (int sig : kSignals) sigaddset(&set, sig);
    pthread_sigmask(SIG_BLOCK, &set, &old_);
  }
  ~SignalBlock() { pthread_sigmask(SIG_SETMASK, &old_, nullptr); }

 private:
  sigset_t old_;
};

// What a stat() mode is, for the errors ("a character device").
const char* kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

}  // namespace

Status check_output(const std::string& path, const char* flag, const std::vector<InputPath>& inputs) {
  struct stat out;
  if (::stat(path.c_str(), &out) != 0) return Status();  // nothing there to replace
  if (!S_ISREG(out.st_mode))
    return Status::error(StatusCode::kInvalidArgument,
                         "%s %s: exists and is not a regular file (%s); pocketlm replaces only regular files", flag,
                         path.c_str(), kind_of(out.st_mode));
  for (const InputPath& in : inputs) {
    struct stat st;
    if (in.path.empty() || ::stat(in.path.c_str(), &st) != 0) continue;
    if (st.st_dev == out.st_dev && st.st_ino == out.st_ino)
      return Status::error(StatusCode::kInvalidArgument,
                           "%s %s: is the same file as the input %s %s; pocketlm never writes over an input (give "
                           "another %s)",
                           flag, path.c_str(), in.label, in.path.c_str(), flag);
  }
  return Status();
}

void remove_temporaries_on_signal() {
  struct sigaction action = {};
  action.sa_handler = remove_temporaries_and_die;
  action.sa_flags = SA_RESETHAND;
  sigemptyset(&action.sa_mask);
  for (int sig : kSignals) sigaddset(&action.sa_mask, sig);  // one cleanup at a time
  for (int sig : kSignals) {
    struct sigaction old = {};
    // An ignored signal (nohup, a background job of a non-interactive shell) stays ignored.
    if (sigaction(sig, nullptr, &old) == 0 && old.sa_handler == SIG_IGN) continue;
    sigaction(sig, &action, nullptr);
  }
}

OutputFile::~OutputFile() { discard(); }

void OutputFile::discard() {
  if (file_) {
    std::fclose(file_);
    file_ = nullptr;
  }
  if (!temp_path_.empty()) {
    std::remove(temp_path_.c_str());
    temp_path_.clear();
  }
  release_slot(slot_);  // after the removal: a signal in between unlinks a missing file
  slot_ = -1;
}

Status OutputFile::open(const std::string& path, const char* flag) {
  discard();
  POCKETLM_TRY(check_output(path, flag));
  path_ = path;
  flag_ = flag;
  std::string templ = path + ".tmp-XXXXXX";  // .gitignore matches this pattern
  int fd = -1;
  {
    SignalBlock block;
    fd = ::mkstemp(templ.data());
    if (fd < 0)
      return Status::error(StatusCode::kIoError, "%s: cannot create %s: %s", flag, path.c_str(), std::strerror(errno));
    slot_ = claim_slot(templ);
  }
  ::fchmod(fd, 0644);
  temp_path_ = templ;
  file_ = ::fdopen(fd, "wb");
  if (!file_) {
    ::close(fd);
    discard();
    return Status::error(StatusCode::kIoError, "%s: cannot write %s: %s", flag, path.c_str(), std::strerror(errno));
  }
  return Status();
}

Status OutputFile::write(const void* data, std::size_t bytes) {
  if (bytes && std::fwrite(data, 1, bytes, file_) != bytes) {
    const int err = errno;
    discard();
    return Status::error(StatusCode::kIoError, "%s: writing %s failed: %s", flag_, path_.c_str(), std::strerror(err));
  }
  return Status();
}

Status OutputFile::commit() {
  const bool flushed = std::fflush(file_) == 0 && ::fsync(::fileno(file_)) == 0;
  const int err = errno;
  const bool closed = std::fclose(file_) == 0;
  file_ = nullptr;
  if (!flushed || !closed) {
    discard();
    return Status::error(StatusCode::kIoError, "%s: writing %s failed: %s", flag_, path_.c_str(), std::strerror(err));
  }
  if (std::rename(temp_path_.c_str(), path_.c_str()) != 0) {
    const int rerr = errno;
    discard();
    return Status::error(StatusCode::kIoError, "%s: cannot rename the output into %s: %s", flag_, path_.c_str(),
                         std::strerror(rerr));
  }
  temp_path_.clear();
  release_slot(slot_);  // after the rename: a signal in between unlinks a name no longer there
  slot_ = -1;
  return Status();
}

}  // namespace pocketlm::cli
