#include <csignal>

#include "commands.h"

int main(int argc, char** argv) {
  // A write past the file-size limit (a full quota, `ulimit -f`) must fail as an error that
  // removes the half-written temporary output, not kill the process and leave it behind.
  std::signal(SIGXFSZ, SIG_IGN);
  return pocketlm::cli::run_cli(argc, argv);
}
