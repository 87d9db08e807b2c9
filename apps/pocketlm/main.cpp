#include <csignal>
#include <exception>
#include <new>
#include <string>

#include "cli_common.h"
#include "commands.h"
#include "output_file.h"
#include "std_streams.h"

int main(int argc, char** argv) {
  // A write past the file-size limit (a full quota, `ulimit -f`) must fail as an error that
  // removes the half-written temporary output, not kill the process and leave it behind.
  std::signal(SIGXFSZ, SIG_IGN);
  // Ctrl-C, kill or a closed terminal while synth/convert write: remove the temporary file.
  pocketlm::cli::remove_temporaries_on_signal();
  // The commands report errors as Status; an exception that still escapes one (memory for a
  // buffer an input sized, a library's throw) is a one-line error too, not std::terminate's
  // abort. Unwinding runs the destructors, so an OutputFile's temporary is removed.
  // Every exit goes through finish_streams: text that did not reach stdout is an error.
  try {
    return pocketlm::cli::finish_streams(pocketlm::cli::run_cli(argc, argv));
  } catch (const std::bad_alloc&) {
    return pocketlm::cli::finish_streams(pocketlm::cli::fail("out of memory"));
  } catch (const std::exception& e) {
    return pocketlm::cli::finish_streams(pocketlm::cli::fail(std::string("unexpected failure: ") + e.what()));
  }
}
