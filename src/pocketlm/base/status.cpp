#include "pocketlm/base/status.h"

#include <atomic>
#include <cstdarg>

#include "pocketlm/base/format.h"

namespace pocketlm {

namespace {

char g_messages[Status::kMessageSlots][Status::kMaxMessage];
// Atomic: a port's read thread makes errors too (a failed storage read), so two threads may take
// a slot at once and must not take the same one.
std::atomic<unsigned> g_next_slot{0};

}  // namespace

Status Status::error(StatusCode code, const char* fmt, ...) {
  Status s;
  s.code_ = code;
  s.slot_ = static_cast<unsigned char>(g_next_slot.fetch_add(1, std::memory_order_relaxed) % kMessageSlots);
  va_list args;
  va_start(args, fmt);
  vformat_to(g_messages[s.slot_], kMaxMessage, fmt, args);
  va_end(args);
  return s;
}

const char* Status::message() const { return ok() ? "" : g_messages[slot_]; }

}  // namespace pocketlm
