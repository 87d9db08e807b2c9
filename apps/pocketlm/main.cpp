#include <csignal>

#include "commands.h"
#include "output_file.h"

int main(int argc, char** argv) {
  // A write past the file-size limit (a full quota, `ulimit -f`) must fail as an error that
  // removes the half-written temporary output, not kill the process and leave it behind.
  std::signal(SIGXFSZ, SIG_IGN);
  // Ctrl-C, kill or a closed terminal while synth/convert write: remove the temporary file.
  pocketlm::cli::remove_temporaries_on_signal();
  return pocketlm::cli::run_cli(argc, argv);
}
