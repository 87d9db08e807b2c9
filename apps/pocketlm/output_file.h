// OutputFile: a file that appears only when complete. Bytes go to a temporary file next to
// the destination; commit() flushes, closes and renames it into place. If anything fails,
// or commit() is never reached, the temporary file is removed: an error never leaves a
// half-written output behind, and neither does SIGINT, SIGTERM or SIGHUP once
// remove_temporaries_on_signal() has installed its handlers.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "pocketlm/base/status.h"

namespace pocketlm::cli {

// Installs handlers for SIGINT, SIGTERM and SIGHUP (those not ignored) that remove the
// temporary file of every open OutputFile and then end the process by the same signal, as
// the default action would. Called by main(); a program embedding the CLI keeps its own.
void remove_temporaries_on_signal();

// A file a command reads, named in check_output's errors: `label` is its flag or role ("-z",
// "model"). An empty path is skipped (an optional input not given).
struct InputPath {
  const char* label;
  std::string path;
};

// "-": stdout, for the flags that take a path of output text (--token-log).
inline bool is_stdout_path(const std::string& path) { return path == "-"; }

// Where an output named `path` is written: `path` itself, or the file an existing symlink
// resolves to (the link is kept and its target written through). A link into /proc or /dev
// (/dev/stdout, /proc/self/fd/1: an open file of this process, which a rename would replace),
// a dangling link, or a loop is refused in one line naming `flag`.
Status resolve_output(const std::string& path, const char* flag, std::string* target);

// Whether `path` may become the output of `flag`. Outputs are renamed over their target (a
// symlink's resolved target, resolve_output), so:
// - an existing target that is not a regular file (a device such as /dev/null, a FIFO, a
//   directory, a socket) is refused: the rename would replace the node with a regular file
//   (and fail only at the end for a directory);
// - a target that is one of `inputs` (the same device and inode, however it is spelled: ./IN,
//   a path through a symlinked folder, a hard link) is refused: the rename would destroy the
//   input the output is made from.
// A missing target is fine here (OutputFile::open reports a directory it cannot create in).
Status check_output(const std::string& path, const char* flag, const std::vector<InputPath>& inputs = {});

class OutputFile {
 public:
  OutputFile() = default;
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  // Creates the temporary file beside `path` (beside a symlink's target) after
  // check_output(path, flag) (no inputs: a command checks those up front, before its work).
  // `flag` names the option in errors ("-o"). The file gets an existing target's mode, else
  // 0666 less the umask. With `text_to_stdout`, "-" is stdout: written as it comes, commit()
  // flushes it.
  Status open(const std::string& path, const char* flag, bool text_to_stdout = false);
  Status write(const void* data, std::size_t bytes);
  // Makes the output visible under its final name.
  Status commit();
  bool is_open() const { return file_ != nullptr; }

 private:
  void discard();

  std::FILE* file_ = nullptr;
  bool stdout_ = false;   // file_ is stdout: neither closed nor renamed
  std::string path_;      // as given, for the errors
  std::string target_;    // what is replaced: path_, or the file its symlink names
  std::string temp_path_;
  int slot_ = -1;  // where the signal handlers find temp_path_ (-1: not registered)
  const char* flag_ = "";
};

}  // namespace pocketlm::cli
