// Shared helpers for the test suite: where the shared models are, running the pocketlm
// binary as a user would, temporary files, and building model files in memory.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "pocketlm/format/gguf_writer.h"
#include "pocketlm/kernels/kernels.h"
#include "pocketlm/memory/arena.h"
#include "pocketlm/model/model_kind.h"

namespace pocketlm::test {

// Where the files the tests read come from. shared/ ($POCKETLM_SHARED, else ../shared beside
// the checkout) has them all. Without it, the public models pinned in tests/public-models.txt
// are read from the download cache that `scripts/get-models --tests` fills (`make test` runs
// it), and the TinyStories text is not to be had: a test that needs a missing file skips,
// saying which file and where it comes from (POCKETLM_REQUIRE_FILES), and never fails for it.
// The golden runs are in the checkout (golden_models.h).
//
// The shared/ directory: $POCKETLM_SHARED, else the one next to the checkout.
std::string shared_dir();
// The download cache: $POCKETLM_CACHE, else $XDG_CACHE_HOME/pocketlm, else
// $HOME/.cache/pocketlm (the rule of scripts/get-models).
std::string cache_dir();
// The path of `file`, named as under shared/ ("models/stories260K.bin",
// "data/tinystories-5k.txt"): shared/'s copy, else the cache's for a public model; "" when
// neither has it.
std::string find_file(const std::string& file);
// The one line a test that needs `file` skips with: that it is missing, and where it comes from.
std::string missing_file_reason(const std::string& file);
// "" when find_file() finds each of `files`, else missing_file_reason() of the first it does
// not. An empty name needs nothing (golden_model_file() of a model the tests make themselves).
std::string first_missing(std::initializer_list<std::string> files);
// The sha256 tests/public-models.txt pins for the public model `name` ("" if it has none).
std::string pinned_sha256(const std::string& name);
// find_file("models/" + name), or shared/'s path for it when it is nowhere (for tests of the
// errors about a missing file, and for tests that have required it already).
std::string model_path(const std::string& name);
// The built pocketlm executable.
std::string pocketlm_binary();
// The emulator command followed by a space in cross builds (qemu-user) or when
// POCKETLM_TEST_EMULATOR names one (scripts/test-cpu), else "": for tests
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
// The file's bytes as a string ("" when it cannot be read).
std::string read_text(const std::string& path);
void write_file(const std::string& path, const std::vector<unsigned char>& bytes);
bool file_exists(const std::string& path);
// Names in `dir`, without . and .. (empty when it cannot be read).
std::vector<std::string> directory_entries(const std::string& dir);
// Hex SHA-256 of a file (via sha256sum, part of coreutils).
std::string sha256_of(const std::string& path);

// stories260K.bin converted by `pocketlm convert --to gguf --type TYPE -z tok512.bin` into a
// fresh temporary directory; a failed conversion is a test failure.
std::string stories260k_gguf(const std::string& type = "f32");

// A GgufWriter's sink that keeps the bytes in memory.
class VectorSink final : public ByteSink {
 public:
  Status write(const void* data, std::size_t bytes) override;
  std::vector<unsigned char>& bytes() { return bytes_; }

 private:
  std::vector<unsigned char> bytes_;
};

// A model of a spec's kind (model/model_kind.h) run directly, without a Session: sized on a
// measuring arena, then carved from an owned one and loaded (every weight resident), as a
// Session does. Failures are test failures; model is null after one.
class LoadedModel {
 public:
  LoadedModel(Storage& storage, const ModelSpec& spec, int seq_len, const Kernels& kernels, int prefill_batch = 1);
  ~LoadedModel();
  LoadedModel(const LoadedModel&) = delete;
  LoadedModel& operator=(const LoadedModel&) = delete;
  Model* model = nullptr;

 private:
  alignas(16) unsigned char memory_[kModelObjectBytes];
  Arena arena_;
};

// The logits of `tokens` at positions 0, 1, ... of an in-memory model file (named "m.gguf"),
// through the registered kind of its architecture, every weight resident (reference kernels,
// seq_len 16): vocab_size values per token, one after another; empty after a failure.
std::vector<float> logits_of_file(const std::vector<unsigned char>& file, std::initializer_list<int> tokens);

// Little-endian append helpers for building checkpoints and tokenizers in tests.
void put_i32(std::vector<unsigned char>& out, std::int32_t v);
void put_f32(std::vector<unsigned char>& out, float v);
// The bits of `v` as the engine prints them in errors ("0x7FC00000"). Tests of NaN messages use it
// rather than a literal: a quiet NaN is 0x7FC00000 on x86 and ARM but 0x7FBFFFFF on MIPS, whose
// legacy NaN encoding has the quiet bit inverted.
std::string float_bits_hex(float v);

}  // namespace pocketlm::test

// Skips the running test unless every named file (as under shared/: "models/tok512.bin") is
// found, with missing_file_reason() of the first that is not. In a TEST body or SetUp();
// GTEST_SKIP returns from the function it is in, hence a macro.
#define POCKETLM_REQUIRE_FILES(...)                                                              \
  do {                                                                                           \
    const std::string pocketlm_missing_ = ::pocketlm::test::first_missing({__VA_ARGS__});        \
    if (!pocketlm_missing_.empty()) GTEST_SKIP() << pocketlm_missing_;                           \
  } while (0)
