// Shared helpers for the test suite: where the shared models are, running the pocketlm
// binary as a user would, temporary files, and building model files in memory.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace pocketlm::test {

// The shared/ directory: $POCKETLM_SHARED, else the one next to the checkout.
std::string shared_dir();
// shared_dir() + "/models/" + name.
std::string model_path(const std::string& name);
// The built pocketlm executable.
std::string pocketlm_binary();
// The emulator command followed by a space in cross builds (qemu-user), else "": for tests
// that start the binary through a shell rather than run_pocketlm().
std::string emulator_prefix();

struct CommandResult {
  int exit_code = -1;
  std::string out;  // stdout
  std::string err;  // stderr
};
// Runs the pocketlm binary with `args` (no shell), capturing stdout and stderr.
CommandResult run_pocketlm(const std::vector<std::string>& args);
// The same with stdin read from the file `stdin_path` (run_pocketlm reads /dev/null).
CommandResult run_pocketlm_with_input(const std::vector<std::string>& args, const std::string& stdin_path);

// run_pocketlm(args) with `fifo` (an existing FIFO among the arguments) held open read-write,
// so that opening it never blocks; if pocketlm reads from it, our end is closed after
// `seconds`, the read sees end-of-file and *in_time is false instead of the test hanging.
CommandResult run_pocketlm_with_fifo(const std::vector<std::string>& args, const std::string& fifo, int seconds,
                                     bool* in_time);

// A fresh empty directory under the system temp dir, removed at process exit.
std::string temp_dir();
std::vector<unsigned char> read_file(const std::string& path);
void write_file(const std::string& path, const std::vector<unsigned char>& bytes);
bool file_exists(const std::string& path);
// Names in `dir`, without . and .. (empty when it cannot be read).
std::vector<std::string> directory_entries(const std::string& dir);
// Hex SHA-256 of a file (via sha256sum, part of coreutils).
std::string sha256_of(const std::string& path);

// Little-endian append helpers for building checkpoints and tokenizers in tests.
void put_i32(std::vector<unsigned char>& out, std::int32_t v);
void put_f32(std::vector<unsigned char>& out, float v);

}  // namespace pocketlm::test
