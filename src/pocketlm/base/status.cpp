#include "pocketlm/base/status.h"

#include <cstdarg>

#include "pocketlm/base/format.h"

namespace pocketlm {

Status Status::error(StatusCode code, const char* fmt, ...) {
  Status s;
  s.code_ = code;
  va_list args;
  va_start(args, fmt);
  vformat_to(s.message_, kMaxMessage, fmt, args);
  va_end(args);
  return s;
}

}  // namespace pocketlm
