// The golden runs (tests/golden/reference_runs.json) and the model files their names stand for.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ports/posix/file_storage.h"

namespace pocketlm::test {

// sha256 from shared/spec/synthetic-models.md: stories15M seed 42 and its q80 (GS 32)
// conversion (stories260K_q80.bin's is in tests/public-models.txt: pinned_sha256()).
inline constexpr const char* kSynth15MSha256 = "d7f05202828112a43c35df3552230fb692b6189e24dac382b66415b4bd6129c9";
inline constexpr const char* kSynth15MQ80Sha256 = "63048bb446e5bdf5b960b32bc11015e147cd2e30cf3b28f15faf74f7e4d606db";
// shared/spec/synthetic-models.md: the stories42M and stories110M shapes, seed 42.
inline constexpr const char* kSynth42MSha256 = "9cac7a0c5ae1c5f953eeac67568a4cbca324a659a4eb39c3e594e2751d922b26";
inline constexpr const char* kSynth42MQ80Sha256 = "bc82f0e1d0ef3575c2687d945414582207911c9b5005c67c5395d1c4610d020d";
inline constexpr const char* kSynth110MSha256 = "2a59ef73d2da6a237a5c9de82c2ed199bb0fa5d4f39b56177790bebf1992ed49";
// `pocketlm synth esp32-ple --seed 42` (docs/ple.md: the ESP32 write-up's PLE shape, F32 GGUF).
inline constexpr const char* kSynthEsp32PleSha256 = "773f5107d08fdf1d0cbab80ce998a6486b0507a60d88cad86819d7fcc7225822";
// Its `convert --to gguf --type q4_0` (15,876,128 bytes).
inline constexpr const char* kSynthEsp32PleQ4_0Sha256 = "bb7c11df6b2bf29293024da35cd8c24cbd689475e1ae300299b402c959d01822";
// Its `convert --to gguf --type q4_0 --tensor-type ple_table=iq4_xs` (15,108,128 bytes).
inline constexpr const char* kSynthEsp32PleIQ4XSSha256 = "cc6e61349adc4d5fb021e94c2d9327da49a405fe45f1cded82eb8da8d356aded";
inline constexpr const char* kSynth110MQ80Sha256 = "6ed8f5242d2191ca144a2eb06bc452c4c3386082fcd48c536d09292dee0f6789";

// Every case of tests/golden/reference_runs.json: what llama2.c's run.c and runq.c produced,
// token by token (format: shared/spec/llama2c-compat.md, last section). The file is part of the
// checkout (copied from shared/golden/), so the cases and the tests named after them exist
// with or without ../shared. Read once; empty only when the file is unreadable, which the
// tests that use the cases report as a failure.
const std::vector<nlohmann::json>& golden_cases();
// The path of that file, for failure messages.
std::string golden_runs_path();
// The golden `next_tokens` of the named case ({} if absent).
std::vector<int> golden_next_tokens(const std::string& case_name);
// A generate() callback that appends each next token to the std::vector<int> at ctx.
bool collect_tokens(std::int32_t prev, std::int32_t next, void* ctx);

// Names of every backend this build has and this CPU runs: each must reproduce the golden tokens.
std::vector<std::string> available_kernel_names();

// The file under shared/ that a golden model name stands for ("models/stories260K_q80.bin"
// for "s260K_q80_gs4.bin"), for POCKETLM_REQUIRE_FILES; "" for the synth models, which the
// pocketlm binary makes.
std::string golden_model_file(const std::string& name);
// "" when the shared/ files of a golden case's model and tokenizer (names as in the golden
// file) are found, else the reason to skip (test_support.h: missing_file_reason).
std::string golden_inputs_missing(const std::string& model, const std::string& tokenizer);
// Path of a golden model ("stories260K.bin", "s260K_q80_gs4.bin", "synth15M.bin",
// "synth15M_q80.bin", "esp32-ple.gguf", "esp32-ple_q4_0.gguf", "esp32-ple_iq4xs.gguf"), or "" when
// it is not available.
std::string golden_model_path(const std::string& name);

// The ESP32-shaped PLE model in Q4_0 (or another golden variant: golden_model_path, generated
// once into the build tree) and Llama 2's tokenizer.bin, opened; a failure to open either is a
// test failure.
struct Esp32PleFiles {
  FileStorage model, tokenizer;
  explicit Esp32PleFiles(const char* name = "esp32-ple_q4_0.gguf");
};

}  // namespace pocketlm::test
