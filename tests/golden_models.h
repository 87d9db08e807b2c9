// Resolves the model names used in shared/golden/reference_runs.json to files.
#pragma once

#include <string>

namespace pocketlm::test {

// Path of a golden model ("stories260K.bin", "s260K_q80_gs4.bin", "synth15M.bin",
// "synth15M_q80.bin"), or "" when it is not available.
std::string golden_model_path(const std::string& name);

}  // namespace pocketlm::test
