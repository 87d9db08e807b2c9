// Status: the engine's error value. The core is built without exceptions, so every
// fallible call returns a Status whose message is one line naming the file or flag, the
// field and the value (e.g. "model.bin: header field dim = -3 must be positive").
// A Status is two bytes, so that the load path's chains of POCKETLM_TRY stay within a
// microcontroller's small task stack (the ESP-IDF main task has 3.5 KiB). The message lives in
// one of kMessageSlots buffers of the thread that made it, taken in turn: creating an error
// never allocates, and a message stays valid until that thread has made kMessageSlots newer
// errors (so an error may be built from the message of any of the kMessageSlots - 1 before it).
// The buffers are per thread, so that two sessions failing on two threads never overwrite
// each other's messages; a Status handed to another thread (a port's read thread reporting a
// failed read) must be made again there from its text (Status::error(code, "%s", text)).
// Builds without thread-local storage (bare metal, one thread) define POCKETLM_NO_THREAD_LOCAL.
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
  kAborted,          // the caller's abort flag stopped the call (SessionOptions::abort)
  kBadState,         // a call the object's state does not allow (the C API's ERR_STATE)
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

// An error about a value the caller chose starts with the engine's name of it (seq_len, text,
// steps, seed, kernels, prefill_batch) followed by " =" or ":"; each front end says it in its
// own words: the CLI names its flags (-n), the C API its fields (config.seq_len).
struct FieldName {
  const char* engine;  // as the engine's message starts
  const char* shown;   // what the front end calls it
};
// message with a leading engine field name from `names` replaced by its shown name, into
// out[0..cap) (NUL-terminated, truncated to fit); other messages are copied as they are.
void rename_field(const char* message, const FieldName* names, int count, char* out, std::size_t cap);

}  // namespace pocketlm

// Propagates a non-ok Status to the caller.
#define POCKETLM_TRY(expr)                       \
  do {                                           \
    ::pocketlm::Status pocketlm_status_ = (expr); \
    if (!pocketlm_status_.ok()) return pocketlm_status_; \
  } while (0)
