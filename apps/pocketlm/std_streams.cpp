#include "std_streams.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include "cli_common.h"

namespace pocketlm::cli {

namespace {
int g_stdout_errno = 0;  // the first failed stdout write's errno (0: none, or none known)
bool g_stdout_failed = false;
}  // namespace

bool flush_stdout() {
  if (std::fflush(stdout) != 0) {
    if (!g_stdout_failed) g_stdout_errno = errno;
    g_stdout_failed = true;
  }
  // A failed fwrite (its buffer flushed midway) sets the stream's error flag only.
  if (std::ferror(stdout)) g_stdout_failed = true;
  return !g_stdout_failed;
}

int finish_streams(int code) {
  if (!flush_stdout())
    code = fail(std::string("stdout: ") + (g_stdout_errno ? std::strerror(g_stdout_errno) : "a write failed"));
  if (std::fflush(stderr) != 0 || std::ferror(stderr)) code = kExitError;
  return code;
}

}  // namespace pocketlm::cli
