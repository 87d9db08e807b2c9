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
#include <cstdlib>
#include <cstring>

#include "std_streams.h"

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

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

// The mode a new output gets: what open(2) with 0666 would give under the process's umask
// (mkstemp makes 0600). umask can only be read by setting it; the CLI is one thread here.
mode_t new_file_mode() {
  const mode_t mask = ::umask(0);
  ::umask(mask);
  return 0666 & ~mask;
}

}  // namespace

Status resolve_output(const std::string& path, const char* flag, std::string* target) {
  *target = path;
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return Status();
  // Each hop of the chain: one into /proc or /dev/fd (/dev/stdout -> /proc/self/fd/1 -> the
  // shell's redirect) names a file this process has open, whose node a rename would replace.
  std::string hop = path;
  for (int depth = 0; depth < 40; ++depth) {
    char text[kMaxPath];
    const ssize_t n = ::readlink(hop.c_str(), text, sizeof text - 1);
    if (n < 0) break;  // not a link: the chain ends here
    text[n] = '\0';
    std::string next = text;
    const std::size_t slash = hop.rfind('/');
    if (next[0] != '/' && slash != std::string::npos) next = hop.substr(0, slash + 1) + next;
    if (starts_with(next, "/proc/") || starts_with(next, "/dev/fd/") || starts_with(next, "/dev/std"))
      return Status::error(StatusCode::kInvalidArgument,
                           "%s %s: is a symlink to %s, an open file of a process, which pocketlm cannot write "
                           "through (give a file, or - for stdout where the flag takes text)",
                           flag, path.c_str(), next.c_str());
    hop = next;
  }
  char* real = ::realpath(path.c_str(), nullptr);
  if (!real) {
    const int err = errno;
    if (err == ENOENT)
      return Status::error(StatusCode::kInvalidArgument,
                           "%s %s: is a symlink to a missing file; pocketlm writes through a link only to an "
                           "existing file (give the target's path)",
                           flag, path.c_str());
    return Status::error(StatusCode::kInvalidArgument, "%s %s: cannot resolve the symlink: %s", flag, path.c_str(),
                         std::strerror(err));
  }
  *target = real;
  std::free(real);
  return Status();
}

namespace {

// check_output, also giving the resolved target (OutputFile::open writes beside it).
Status check_output_target(const std::string& path, const char* flag, const std::vector<InputPath>& inputs,
                           std::string* resolved) {
  if (path.empty())  // `-o ''`: refused before any work, not at the rename after all of it
    return Status::error(StatusCode::kInvalidArgument, "%s '': an empty path; give the output file's name", flag);
  std::string& target = *resolved;
  POCKETLM_TRY(resolve_output(path, flag, &target));
  struct stat out;
  if (::stat(target.c_str(), &out) != 0) return Status();  // nothing there to replace
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

}  // namespace

Status check_output(const std::string& path, const char* flag, const std::vector<InputPath>& inputs) {
  std::string target;
  return check_output_target(path, flag, inputs, &target);
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
  if (file_ && !stdout_) std::fclose(file_);
  file_ = nullptr;
  stdout_ = false;
  if (!temp_path_.empty()) {
    std::remove(temp_path_.c_str());
    temp_path_.clear();
  }
  release_slot(slot_);  // after the removal: a signal in between unlinks a missing file
  slot_ = -1;
}

Status OutputFile::open(const std::string& path, const char* flag, bool text_to_stdout) {
  discard();
  path_ = path;
  flag_ = flag;
  if (text_to_stdout && is_stdout_path(path)) {
    file_ = stdout;
    stdout_ = true;
    return Status();
  }
  POCKETLM_TRY(check_output_target(path, flag, {}, &target_));
  // The temporary lives beside what it replaces: a rename cannot cross file systems.
  std::string templ = target_ + ".tmp-XXXXXX";  // .gitignore matches this pattern
  int fd = -1;
  {
    SignalBlock block;
    fd = ::mkstemp(templ.data());
    if (fd < 0)
      return Status::error(StatusCode::kIoError, "%s: cannot create %s: %s", flag, path.c_str(), std::strerror(errno));
    slot_ = claim_slot(templ);
  }
  // An existing output keeps its mode (and, for root, its owner); a new one honours the umask.
  struct stat existing;
  if (::stat(target_.c_str(), &existing) == 0) {
    ::fchmod(fd, existing.st_mode & 07777);
    if (::geteuid() == 0 && ::fchown(fd, existing.st_uid, existing.st_gid) != 0) {
      // Keeping root's ownership instead is harmless: the mode still applies.
    }
  } else {
    ::fchmod(fd, new_file_mode());
  }
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
  // stdout's failures are the command's exit status (std_streams.h), reported once.
  if (stdout_) {
    std::fwrite(data, 1, bytes, file_);
    return Status();
  }
  if (bytes && std::fwrite(data, 1, bytes, file_) != bytes) {
    const int err = errno;
    discard();
    return Status::error(StatusCode::kIoError, "%s: writing %s failed: %s", flag_, path_.c_str(), std::strerror(err));
  }
  return Status();
}

Status OutputFile::commit() {
  if (stdout_) {
    flush_stdout();
    discard();
    return Status();
  }
  const bool flushed = std::fflush(file_) == 0 && ::fsync(::fileno(file_)) == 0;
  const int err = errno;
  const bool closed = std::fclose(file_) == 0;
  file_ = nullptr;
  if (!flushed || !closed) {
    discard();
    return Status::error(StatusCode::kIoError, "%s: writing %s failed: %s", flag_, path_.c_str(), std::strerror(err));
  }
  if (std::rename(temp_path_.c_str(), target_.c_str()) != 0) {
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
