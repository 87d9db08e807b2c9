// Byte sizes as people write them: "25165824", "24M", "24MiB", "512K", "1.5G".
// K/M/G (with or without "iB"/"B") are binary multiples (1024-based), as heap budgets
// on the PSP and ESP32 are quoted in KiB/MiB.
#pragma once

#include <cstddef>
#include <cstdint>

#include "pocketlm/base/status.h"

namespace pocketlm {

// Parses `text` into *bytes. `what` names the flag for the error message, e.g. "--heap".
// Errors: empty text, unknown suffix, negative, zero, fraction of a byte, > 2^63.
Status parse_byte_size(const char* what, const char* text, std::uint64_t* bytes);

// Writes a human form such as "24.00 MiB" or "512 B" into buf (always NUL-terminated).
void format_byte_size(std::uint64_t bytes, char* buf, std::size_t buf_size);

}  // namespace pocketlm
