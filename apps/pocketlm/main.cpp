#include "commands.h"

int main(int argc, char** argv) { return pocketlm::cli::run_cli(argc, argv); }
