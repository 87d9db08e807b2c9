// OskScript: what the PSP's on-screen keyboard (sceUtilityOsk) would hand back, turn after turn,
// as a file, so the host drives the console exactly as the device does. Format: UTF-16LE code
// units (the OSK's outtext, BMP characters; surrogate pairs pass through text/utf16.h as well);
// each string ends with U+0000, as the OSK terminates outtext; the last string may omit it. An
// optional byte-order mark (FF FE) may start the file. Every string is one turn.
//
// Errors (kBadFormat, naming the file): a UTF-8 text file (valid UTF-8 with no NUL byte: read
// as UTF-16LE its byte pairs would be CJK mojibake; every string but the last of a script ends
// with the bytes 00 00, so only a one-string script without its U+0000 could be both, and
// ending it with U+0000 makes it unambiguous), an odd number of bytes, a big-endian BOM (FE FF),
// no strings, an empty string (two U+0000 in a row), and a string longer than kMaxOskUnits code
// units (the bounded input of the OSK's outtextlimit).
#pragma once

#include <cstddef>

#include "pocketlm/base/status.h"

namespace pocketlm {

// Code units one OSK string may hold (the app's outtext buffer on the device).
inline constexpr std::size_t kMaxOskUnits = 1024;

class OskScript {
 public:
  // Checks data[0..bytes) (not copied: it must outlive the script); `name` labels errors.
  Status init(const unsigned char* data, std::size_t bytes, const char* name);
  // Strings in the script.
  int count() const { return count_; }
  // The next string's code units (without its U+0000) into *units / *unit_bytes; false at the end.
  bool next(const unsigned char** units, std::size_t* unit_bytes);

 private:
  const unsigned char* data_ = nullptr;
  std::size_t bytes_ = 0;
  std::size_t at_ = 0;
  int count_ = 0;
};

}  // namespace pocketlm
