#include "pocketlm/base/status.h"

#include <cstdarg>
#include <cstring>

#include "pocketlm/base/format.h"

namespace pocketlm {

namespace {

#if defined(POCKETLM_NO_THREAD_LOCAL)
#define POCKETLM_THREAD_LOCAL
#else
#define POCKETLM_THREAD_LOCAL thread_local
#endif

// Each thread's own slots (status.h): a message is only ever written by the thread that reads it
// back, so no other thread can tear or reuse it.
POCKETLM_THREAD_LOCAL char g_messages[Status::kMessageSlots][Status::kMaxMessage];
POCKETLM_THREAD_LOCAL unsigned g_next_slot = 0;

}  // namespace

Status Status::error(StatusCode code, const char* fmt, ...) {
  Status s;
  s.code_ = code;
  s.slot_ = static_cast<unsigned char>(g_next_slot++ % kMessageSlots);
  va_list args;
  va_start(args, fmt);
  vformat_to(g_messages[s.slot_], kMaxMessage, fmt, args);
  va_end(args);
  return s;
}

const char* Status::message() const { return ok() ? "" : g_messages[slot_]; }

void rename_field(const char* message, const FieldName* names, int count, char* out, std::size_t cap) {
  if (cap == 0) return;
  for (int i = 0; i < count; ++i) {
    const std::size_t n = std::strlen(names[i].engine);
    // Equal for n bytes means message holds at least n, so message[n] is its next byte.
    if (std::strncmp(message, names[i].engine, n) == 0 && (message[n] == ' ' || message[n] == ':')) {
      format_to(out, cap, "%s%s", names[i].shown, message + n);
      return;
    }
  }
  format_to(out, cap, "%s", message);
}

}  // namespace pocketlm
