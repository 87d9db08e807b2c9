// Status: the engine's error value. The core is built without exceptions, so every
// fallible call returns a Status whose message is one line naming the file or flag, the
// field and the value (e.g. "model.bin: header field dim = -3 must be positive").
// A Status is two bytes, so that the load path's chains of POCKETLM_TRY stay within a
// microcontroller's small task stack (the ESP-IDF main task has 3.5 KiB). The message lives in
// one of kMessageSlots static buffers, taken in turn: creating an error never allocates, and a
// message stays valid until kMessageSlots newer errors have been made (so an error may be
// built from the message of any of the kMessageSlots - 1 before it). Errors are made on the
// session's thread and on a port's read thread (a failed storage read); the slot counter is
// atomic, so each error gets its own slot (the kernels that workers run never fail).
#pragma once

#include <cstddef>

namespace pocketlm {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,  // a flag or option value is out of range
  kNotFound,         // a file does not exist or cannot be opened
  kIoError,          // a read or write failed
  kBadFormat,        // a file's bytes disagree with its format
  kOutOfMemory,      // the arena or budget is too small
  kUnsupported,      // a valid request this build does not implement
};

class Status {
 public:
  static constexpr std::size_t kMaxMessage = 320;
  static constexpr int kMessageSlots = 8;

  Status() = default;
  // printf-style constructor for errors; the message is truncated to kMaxMessage - 1 bytes.
  static Status error(StatusCode code, const char* fmt, ...)
      __attribute__((format(printf, 2, 3)));

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  // The one-line message ("" for ok).
  const char* message() const;

 private:
  StatusCode code_ = StatusCode::kOk;
  unsigned char slot_ = 0;
};

}  // namespace pocketlm

// Propagates a non-ok Status to the caller.
#define POCKETLM_TRY(expr)                       \
  do {                                           \
    ::pocketlm::Status pocketlm_status_ = (expr); \
    if (!pocketlm_status_.ok()) return pocketlm_status_; \
  } while (0)
