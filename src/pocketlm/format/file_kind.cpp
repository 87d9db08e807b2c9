#include "pocketlm/format/file_kind.h"

#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstring>

namespace pocketlm {

namespace {

std::uint32_t le32(const unsigned char* p) {
  return static_cast<std::uint32_t>(p[0]) | static_cast<std::uint32_t>(p[1]) << 8 |
         static_cast<std::uint32_t>(p[2]) << 16 | static_cast<std::uint32_t>(p[3]) << 24;
}

std::uint32_t be32(const unsigned char* p) {
  return static_cast<std::uint32_t>(p[3]) | static_cast<std::uint32_t>(p[2]) << 8 |
         static_cast<std::uint32_t>(p[1]) << 16 | static_cast<std::uint32_t>(p[0]) << 24;
}

std::uint64_t le64(const unsigned char* p) {
  return static_cast<std::uint64_t>(le32(p)) | static_cast<std::uint64_t>(le32(p + 4)) << 32;
}

bool starts_with(const unsigned char* head, std::size_t n, const char* prefix) {
  const std::size_t len = std::strlen(prefix);
  return n >= len && std::memcmp(head, prefix, len) == 0;
}

// Seven header ints a llama2.c exporter could have written: positive (vocab_size negative
// for an unshared v0 classifier), heads dividing dim, kv heads dividing heads, even head size.
bool plausible_config(std::int32_t v[7]) {
  if (v[5] < 0 && v[5] != INT32_MIN) v[5] = -v[5];
  for (int i = 0; i < 7; ++i)
    if (v[i] <= 0) return false;
  return v[0] % v[3] == 0 && v[4] <= v[3] && v[3] % v[4] == 0 && (v[0] / v[3]) % 2 == 0;
}

bool plausible_le_header(const unsigned char* head, std::size_t n) {
  if (n >= 4 && le32(head) == 0x616b3432) return true;  // "24ka": llama2.c v1/v2 as written
  if (n < 28) return false;
  std::int32_t v[7];
  for (int i = 0; i < 7; ++i) v[i] = static_cast<std::int32_t>(le32(head + 4 * i));
  return plausible_config(v);
}

// Text as a download error or a pointer file is: no control bytes but tab, CR, LF, FF.
bool is_text(const unsigned char* head, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    const unsigned char c = head[i];
    if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\f') || c == 0x7F) return false;
  }
  return n > 0;
}

bool contains_nocase(const unsigned char* head, std::size_t n, const char* needle) {
  const std::size_t len = std::strlen(needle);
  for (std::size_t i = 0; i + len <= n; ++i) {
    std::size_t j = 0;
    while (j < len && (head[i + j] | 0x20) == needle[j]) ++j;  // needle is lower case
    if (j == len) return true;
  }
  return false;
}

// Up to `max` characters of `text` for a message: printable ASCII, the rest as '?'.
void quote(const unsigned char* text, std::size_t n, std::size_t max, char* out) {
  std::size_t k = 0;
  for (std::size_t i = 0; i < n && k < max; ++i) {
    const unsigned char c = text[i];
    out[k++] = c >= 0x20 && c < 0x7F ? static_cast<char>(c) : '?';
  }
  out[k] = '\0';
}

// A llama2.c tokenizer.bin: max_token_length, then (float score, int len, len bytes) per
// token. Three whole entries that make sense (or a tiny file that ends after one), and the
// scores are zero or normal floats: integers reinterpreted as floats are subnormal.
bool is_tokenizer(const unsigned char* head, std::size_t n, std::uint64_t file_bytes, std::int32_t* max_len,
                  char* first_piece) {
  if (n < 8) return false;
  *max_len = static_cast<std::int32_t>(le32(head));
  if (*max_len < 1 || *max_len > 4096) return false;
  std::size_t pos = 4;
  int entries = 0;
  while (pos + 8 <= n) {
    float score;
    const std::uint32_t bits = le32(head + pos);
    std::memcpy(&score, &bits, 4);
    const std::int32_t len = static_cast<std::int32_t>(le32(head + pos + 4));
    if (!std::isfinite(score) || (score != 0.0f && std::fabs(score) < FLT_MIN) || std::fabs(score) > 1e9f) return false;
    if (len < 1 || len > *max_len) return false;
    if (pos + 8 + static_cast<std::size_t>(len) > n) break;
    if (entries == 0) quote(head + pos + 8, static_cast<std::size_t>(len), 16, first_piece);
    pos += 8 + static_cast<std::size_t>(len);
    ++entries;
  }
  return entries >= 3 || (entries >= 1 && pos == file_bytes);
}

// Files named by a magic number at offset 0 that no checkpoint or tokenizer.bin starts with
// (read as a llama2.c header, each is a dim or max_token_length far out of range). One row a
// kind; the model formats with advice of their own (GGUF, zip, ELF, ...) are below.
struct FileMagic {
  const char* bytes;
  std::size_t length;
  const char* what;
};
constexpr FileMagic kFileMagics[] = {
    {"\x89PNG\r\n\x1a\n", 8, "a PNG image"},
    {"\xFF\xD8\xFF", 3, "a JPEG image"},
    {"GIF8", 4, "a GIF image"},
    {"%PDF-", 5, "a PDF document"},
    {"\x1F\x8B", 2, "a gzip-compressed file (decompress it first: gunzip)"},
    {"BZh", 3, "a bzip2-compressed file (decompress it first: bunzip2)"},
    {"\xFD" "7zXZ", 5, "an xz-compressed file (decompress it first: unxz)"},
    {"\x28\xB5\x2F\xFD", 4, "a zstd-compressed file (decompress it first: unzstd)"},
    {"7z\xBC\xAF\x27\x1C", 6, "a 7-Zip archive"},
    {"Rar!\x1A\x07", 6, "a RAR archive"},
    {"RIFF", 4, "a RIFF file (WAV, AVI or WebP)"},
    {"OggS", 4, "an Ogg media file"},
    {"\x93NUMPY", 6, "a NumPy .npy array"},
    {"SQLite format 3", 15, "an SQLite database"},
};

}  // namespace

bool describe_foreign_file(const unsigned char* head, std::size_t n, std::uint64_t file_bytes, char* out,
                           std::size_t out_size, ExpectedFile expected) {
  const bool tokenizer = expected == ExpectedFile::kTokenizer;
  // "not a model" / "not a tokenizer", and the llama2.c file it is not.
  const char* noun = tokenizer ? "a tokenizer" : "a model";
  const char* llama2c = tokenizer ? "a llama2.c tokenizer.bin" : "a llama2.c checkpoint";
  // What a tokenizer.bin looks like first: its records could happen to start like a magic
  // number (a first piece of 123 bytes puts '{' at byte 8, as in safetensors).
  std::int32_t max_len = 0;
  char piece[20] = "";
  const bool is_tok = is_tokenizer(head, n, file_bytes, &max_len, piece);
  if (tokenizer && is_tok) return false;
  // Magic numbers first: no real checkpoint starts with them.
  if (starts_with(head, n, "version https://git-lfs")) {
    unsigned long long size = 0;
    for (std::size_t i = 0; i + 6 < n; ++i) {
      if (std::memcmp(head + i, "\nsize ", 6) != 0) continue;
      for (std::size_t j = i + 6; j < n && head[j] >= '0' && head[j] <= '9' && size < 1000000000000000ULL; ++j)
        size = size * 10 + (head[j] - '0');
    }
    char of[48] = "";
    if (size) std::snprintf(of, sizeof of, " (of a %llu-byte file)", size);
    std::snprintf(out, out_size, "a Git LFS pointer%s, not the file itself: run `git lfs pull` in its repository", of);
    return true;
  }
  if (starts_with(head, n, "GGUF")) {
    char version[24] = "";
    if (n >= 8) std::snprintf(version, sizeof version, " v%u", static_cast<unsigned>(le32(head + 4)));
    if (tokenizer)
      std::snprintf(out, out_size, "a GGUF%s model file, not a llama2.c tokenizer.bin (a GGUF model carries its own "
                    "tokenizer: drop -z)", version);
    else
      std::snprintf(out, out_size, "a GGUF%s file (llama.cpp's format); pocketlm reads GGUF v3 llama models with F32, "
                    "F16, Q8_0, Q4_0 and IQ4_XS tensors", version);
    return true;
  }
  if (starts_with(head, n, "lmgg") || starts_with(head, n, "fmgg") || starts_with(head, n, "tjgg")) {
    std::snprintf(out, out_size, "a GGML/GGJT file (llama.cpp's older format), not %s", llama2c);
    return true;
  }
  for (const FileMagic& m : kFileMagics)
    if (n >= m.length && std::memcmp(head, m.bytes, m.length) == 0) {
      std::snprintf(out, out_size, "%s, not %s", m.what, noun);
      return true;
    }
  if (starts_with(head, n, "\x7f" "ELF")) {
    std::snprintf(out, out_size, "an ELF program or library, not %s", noun);
    return true;
  }
  const char* export_py = tokenizer ? "" : ": convert it with llama2.c's export.py";
  if (starts_with(head, n, "PK\x03\x04")) {
    std::snprintf(out, out_size, "a zip archive (a PyTorch .pt/.pth checkpoint is one), not %s%s", llama2c, export_py);
    return true;
  }
  if (n >= 9 && head[8] == '{' && le64(head) > 1 && le64(head) <= file_bytes - 8) {
    std::snprintf(out, out_size, "a safetensors file (Hugging Face), not %s%s", llama2c, export_py);
    return true;
  }
  if (starts_with(head, n, "ak42")) {  // 0x616b3432 stored big-endian
    std::snprintf(out, out_size, "a llama2.c checkpoint written big-endian (magic 'ak42', not '24ka')%s",
                  tokenizer ? ", not a tokenizer.bin" : "; the format is little-endian: export it on a little-endian machine");
    return true;
  }
  // The rest are guesses from structure: never for what was expected.
  const bool header = plausible_le_header(head, n);
  if (!tokenizer && header) return false;
  if (tokenizer && header) {
    std::snprintf(out, out_size, "a llama2.c checkpoint, not a tokenizer.bin: give it as the model and the "
                  "tokenizer.bin with -z");
    return true;
  }
  if (n >= 28) {
    std::int32_t v[7];
    bool small = true;
    for (int i = 0; i < 7; ++i) {
      v[i] = static_cast<std::int32_t>(be32(head + 4 * i));
      small = small && (v[i] < (1 << 24) && v[i] > -(1 << 24));
    }
    if (small && plausible_config(v)) {
      std::snprintf(out, out_size, "a llama2.c v0 checkpoint written big-endian (read so, its header says dim %d, "
                    "hidden_dim %d, %d layers, vocab_size %d)%s", static_cast<int>(v[0]), static_cast<int>(v[1]),
                    static_cast<int>(v[2]), static_cast<int>(v[5]),
                    tokenizer ? ", not a tokenizer.bin"
                              : "; the format is little-endian: export it on a little-endian machine");
      return true;
    }
  }
  if (is_tok) {
    std::snprintf(out, out_size, "a llama2.c tokenizer (max_token_length %d, first piece '%s'), not a model: give "
                  "it with -z and a checkpoint as the model", static_cast<int>(max_len), piece);
    return true;
  }
  std::size_t skip = starts_with(head, n, "\xEF\xBB\xBF") ? 3 : 0;  // a UTF-8 byte order mark
  if (is_text(head + skip, n - skip)) {
    if (contains_nocase(head, n, "<html") || contains_nocase(head, n, "<!doctype html")) {
      std::snprintf(out, out_size, "an HTML page, not %s: the download saved a web page (on Hugging Face, "
                    "download .../resolve/main/FILE, not .../blob/main/FILE)", noun);
      return true;
    }
    while (skip < n && (head[skip] == ' ' || head[skip] == '\t' || head[skip] == '\n' || head[skip] == '\r')) ++skip;
    std::size_t end = skip;
    while (end < n && head[end] != '\n' && head[end] != '\r') ++end;
    char line[64];
    quote(head + skip, end - skip, 48, line);
    std::snprintf(out, out_size, "a text file ('%s%s'), not %s: a failed download saves the server's message",
                  line, end - skip > 48 ? "..." : "", noun);
    return true;
  }
  return false;
}

Status name_foreign_file(Storage& storage, const Status& rejected, ExpectedFile expected) {
  unsigned char head[kFileKindHeadBytes];
  const std::uint64_t size = storage.size();
  const std::size_t n = size < kFileKindHeadBytes ? static_cast<std::size_t>(size) : kFileKindHeadBytes;
  char what[240];
  if (n == 0 || !storage.read(0, head, n).ok() || !describe_foreign_file(head, n, size, what, sizeof what, expected))
    return rejected;
  // GGUF models have their own reader, whose error already names the key or tensor at fault.
  if (expected == ExpectedFile::kModel && starts_with(head, n, "GGUF")) return rejected;
  return Status::error(StatusCode::kBadFormat, "%s: this is %s", storage.name(), what);
}

}  // namespace pocketlm
