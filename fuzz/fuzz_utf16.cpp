// Fuzzes utf16le_to_utf8 (PSP on-screen keyboard text): arbitrary bytes, an output capacity
// taken from the first byte (tiny buffers test the capacity check); the output must be
// valid UTF-8, within capacity, and complete when the buffer is large enough.
#include "fuzz_common.h"
#include "pocketlm/text/utf16.h"

using namespace pocketlm;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const bool roomy = data[0] & 0x80;
  const unsigned char* in = data + 1;
  const std::size_t in_bytes = size - 1;
  const std::size_t capacity = roomy ? 3 * in_bytes / 2 : (data[0] & 0x7F);
  std::vector<char> out(capacity);  // exact size: ASan catches any write past it
  std::size_t n = 0;
  const Status st = utf16le_to_utf8(in, in_bytes, out.data(), capacity, &n);
  if (n > capacity) std::abort();
  if (!fuzz::valid_utf8(reinterpret_cast<const unsigned char*>(out.data()), n)) std::abort();
  if (roomy && (in_bytes % 2 == 0) != st.ok()) std::abort();  // 3 bytes per unit always fit
  if (st.ok() && in_bytes / 2 > n) std::abort();               // at least one byte per unit
  return 0;
}
