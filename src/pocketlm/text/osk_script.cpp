#include "pocketlm/text/osk_script.h"

namespace pocketlm {

namespace {

unsigned unit_at(const unsigned char* p) { return static_cast<unsigned>(p[0]) | static_cast<unsigned>(p[1]) << 8; }

}  // namespace

Status OskScript::init(const unsigned char* data, std::size_t bytes, const char* name) {
  data_ = data;
  bytes_ = bytes;
  at_ = 0;
  count_ = 0;
  if (bytes % 2 != 0)
    return Status::error(StatusCode::kBadFormat, "%s: %zu bytes is not a whole number of UTF-16LE code units", name,
                         bytes);
  if (bytes >= 2 && data[0] == 0xFE && data[1] == 0xFF)
    return Status::error(StatusCode::kBadFormat, "%s: byte-order mark FE FF is big-endian; the OSK's text is UTF-16LE",
                         name);
  if (bytes >= 2 && data[0] == 0xFF && data[1] == 0xFE) at_ = 2;
  std::size_t length = 0;  // code units of the current string
  for (std::size_t i = at_; i < bytes; i += 2) {
    if (unit_at(data + i) != 0) {
      if (++length > kMaxOskUnits)
        return Status::error(StatusCode::kBadFormat,
                             "%s: string %d (at byte %zu) is longer than %zu code units, the OSK's limit", name,
                             count_ + 1, i - 2 * (length - 1), kMaxOskUnits);
      continue;
    }
    if (length == 0)
      return Status::error(StatusCode::kBadFormat, "%s: string %d (ending at byte %zu) is empty", name, count_ + 1, i);
    ++count_;
    length = 0;
  }
  if (length > 0) ++count_;
  if (count_ == 0) return Status::error(StatusCode::kBadFormat, "%s: holds no string (%zu bytes)", name, bytes);
  return Status();
}

bool OskScript::next(const unsigned char** units, std::size_t* unit_bytes) {
  if (at_ >= bytes_) return false;
  std::size_t end = at_;
  while (end < bytes_ && unit_at(data_ + end) != 0) end += 2;
  *units = data_ + at_;
  *unit_bytes = end - at_;
  at_ = end + 2;
  return true;
}

}  // namespace pocketlm
