// Writing a framebuffer as a PNG file (libpng), for the console's emulated screens.
#pragma once

#include <cstdint>
#include <string>

#include "pocketlm/base/status.h"
#include "pocketlm/ui/console.h"

namespace pocketlm::cli {

// Writes fb's width x height pixels (0xAABBGGRR, the PSP's 8888 order: red in the low byte) as
// an 8-bit RGB PNG at `path`, through a temporary file renamed into place. `flag` names the
// option in errors.
Status write_png(const Framebuffer& fb, const std::string& path, const char* flag);

}  // namespace pocketlm::cli
