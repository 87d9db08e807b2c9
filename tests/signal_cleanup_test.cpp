// An interrupted write leaves nothing: SIGINT, SIGTERM or SIGHUP sent to a running
// `pocketlm synth stories110M` (438 MB, long enough to be caught mid-write) removes its
// temporary file NAME.tmp-XXXXXX, and the process still dies of that signal, as a shell
// expects of an interrupted program.
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "test_support.h"

extern char** environ;

namespace pocketlm::test {
namespace {

// Starts `pocketlm args` (through the emulator in cross builds) with default signal actions
// and an empty signal mask, whatever this test inherited (a background job of a shell
// without job control starts with SIGINT ignored).
pid_t spawn(const std::vector<std::string>& args, const std::string& err_path) {
  std::vector<std::string> storage;
  const std::string emulator = emulator_prefix();
  for (std::size_t i = 0; i < emulator.size();) {
    std::size_t e = emulator.find(' ', i);
    if (e == std::string::npos) e = emulator.size();
    if (e > i) storage.push_back(emulator.substr(i, e - i));
    i = e + 1;
  }
  storage.push_back(pocketlm_binary());
  storage.insert(storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : storage) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t defaults, empty;
  sigemptyset(&defaults);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&defaults, sig);
  sigemptyset(&empty);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setsigmask(&attr, &empty);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
  pid_t pid = -1;
  if (posix_spawnp(&pid, argv[0], &actions, &attr, argv.data(), environ) != 0) pid = -1;
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  return pid;
}

class SignalCleanup : public ::testing::TestWithParam<int> {};

TEST_P(SignalCleanup, InterruptedSynthLeavesNoTemporaryFile) {
  const int sig = GetParam();
  const std::string dir = temp_dir(), err_path = temp_dir() + "/stderr";
  const pid_t pid = spawn({"synth", "stories110M", "--seed", "1", "-o", dir + "/synth110M.bin"}, err_path);
  ASSERT_GT(pid, 0);
  // Wait for the temporary file, then interrupt the write at once.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  std::vector<std::string> names;
  while ((names = directory_entries(dir)).empty() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  ASSERT_EQ(names.size(), 1u) << "no temporary file appeared";
  EXPECT_NE(names[0].find("synth110M.bin.tmp-"), std::string::npos) << names[0];
  ASSERT_EQ(::kill(pid, sig), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_FALSE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << "the synth finished before the signal arrived; nothing was tested";
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == sig)
      << "status " << status << ": the process must end by the signal itself";
  const std::vector<std::string> left = directory_entries(dir);
  EXPECT_TRUE(left.empty()) << "left behind: " << (left.empty() ? "" : left[0]);
}

INSTANTIATE_TEST_SUITE_P(Signals, SignalCleanup, ::testing::Values(SIGINT, SIGTERM, SIGHUP),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return std::string(info.param == SIGINT ? "SIGINT" : info.param == SIGTERM ? "SIGTERM" : "SIGHUP");
                         });

}  // namespace
}  // namespace pocketlm::test
