// Fuzzes parse_byte_size (the --heap flag): arbitrary text, NUL-terminated; an accepted size
// must be positive and <= 2^63, and format_byte_size must handle it in any buffer size.
#include <string>

#include "fuzz_common.h"
#include "pocketlm/base/byte_size.h"

using namespace pocketlm;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);  // stops at an embedded NUL
  std::uint64_t bytes = 0;
  const Status st = parse_byte_size("--heap", text.c_str(), &bytes);
  if (!st.ok()) return 0;
  if (bytes == 0 || bytes > (std::uint64_t{1} << 63)) std::abort();
  for (std::size_t cap : {std::size_t{1}, std::size_t{5}, std::size_t{32}}) {
    std::vector<char> buf(cap);
    format_byte_size(bytes, buf.data(), cap);
    if (std::string(buf.data(), cap).find('\0') == std::string::npos) std::abort();  // NUL-terminated
  }
  return 0;
}
