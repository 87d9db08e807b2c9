// UTF-16LE → UTF-8, for text that arrives as UTF-16 code units: the PSP's on-screen keyboard
// (sceUtilityOsk) returns the typed prompt as little-endian UTF-16.
#pragma once

#include <cstddef>

#include "pocketlm/base/status.h"

namespace pocketlm {

// Converts in[0..in_bytes) (UTF-16LE code units) into UTF-8 at out[0..out_capacity), not
// NUL-terminated; *out_bytes receives the bytes written. A surrogate pair becomes one 4-byte
// character; an unpaired high or low surrogate becomes U+FFFD (EF BF BD); U+0000 is kept as
// byte 0. Errors (kInvalidArgument): an odd in_bytes (a trailing half code unit is a caller
// bug, not text), and output that does not fit out_capacity — then *out_bytes holds the
// bytes of the complete characters that did fit. Never allocates; worst case needs
// 3 * in_bytes / 2 output bytes.
Status utf16le_to_utf8(const unsigned char* in, std::size_t in_bytes, char* out, std::size_t out_capacity,
                       std::size_t* out_bytes);

}  // namespace pocketlm
