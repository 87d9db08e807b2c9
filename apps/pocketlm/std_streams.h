// stdout and stderr as a command's results: a write that fails (a full disk, a quota,
// /dev/full) makes the command fail. glibc drops the bytes of a failed flush, so ferror() at
// exit would still see it but no longer say why: the first failure's errno is kept here.
#pragma once

namespace pocketlm::cli {

// Flushes stdout. False when a write to it has failed, now or before (the first failure's
// reason is kept for finish_streams); a generating command stops there.
bool flush_stdout();

// The exit status of a command that returned `code`: stdout and stderr flushed; a failed
// stdout write prints "pocketlm: error: stdout: <reason>" and gives kExitError, and so does a
// failed stderr (which can only be an exit status). main() returns it.
int finish_streams(int code);

}  // namespace pocketlm::cli
