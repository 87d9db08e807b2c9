// OutputFile: a file that appears only when complete. Bytes go to a temporary file next to
// the destination; commit() flushes, closes and renames it into place. If anything fails,
// or commit() is never reached, the temporary file is removed: an error never leaves a
// half-written output behind, and neither does SIGINT, SIGTERM or SIGHUP once
// remove_temporaries_on_signal() has installed its handlers.
#pragma once

#include <cstdio>
#include <string>

#include "pocketlm/base/status.h"

namespace pocketlm::cli {

// Installs handlers for SIGINT, SIGTERM and SIGHUP (those not ignored) that remove the
// temporary file of every open OutputFile and then end the process by the same signal, as
// the default action would. Called by main(); a program embedding the CLI keeps its own.
void remove_temporaries_on_signal();

class OutputFile {
 public:
  OutputFile() = default;
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  // Creates the temporary file beside `path`. `flag` names the option in errors ("-o").
  Status open(const std::string& path, const char* flag);
  Status write(const void* data, std::size_t bytes);
  // Makes the output visible under its final name.
  Status commit();
  bool is_open() const { return file_ != nullptr; }

 private:
  void discard();

  std::FILE* file_ = nullptr;
  std::string path_;
  std::string temp_path_;
  int slot_ = -1;  // where the signal handlers find temp_path_ (-1: not registered)
  const char* flag_ = "";
};

}  // namespace pocketlm::cli
