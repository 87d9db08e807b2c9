#include "pocketlm/format/gguf_parser.h"

#include "pocketlm/base/checked.h"

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "GGUF fields are read as little-endian values");

namespace pocketlm {

bool probe_gguf(const unsigned char* head, std::size_t n) { return n >= 4 && std::memcmp(head, "GGUF", 4) == 0; }

namespace gguf {

const char* value_type_name(std::uint32_t type) {
  static const char* const kNames[kValueTypeCount] = {"u8",  "i8",     "u16",   "i16", "u32", "i32", "f32",
                                                      "bool", "string", "array", "u64", "i64", "f64"};
  return type < kValueTypeCount ? kNames[type] : "?";
}

int value_type_bytes(std::uint32_t type) {
  static const int kBytes[kValueTypeCount] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};
  return type < kValueTypeCount ? kBytes[type] : 0;
}

const char* ggml_type_name(std::uint32_t type) {
  // ggml's type codes; 4, 5 (Q4_2, Q4_3) and 31..33 (Q4_0_4_4, ...) were removed from ggml.
  static const char* const kNames[] = {"F32",     "F16",    "Q4_0",   "Q4_1",  "Q4_2 (removed)", "Q4_3 (removed)",
                                       "Q5_0",    "Q5_1",   "Q8_0",   "Q8_1",  "Q2_K",           "Q3_K",
                                       "Q4_K",    "Q5_K",   "Q6_K",   "Q8_K",  "IQ2_XXS",        "IQ2_XS",
                                       "IQ3_XXS", "IQ1_S",  "IQ4_NL", "IQ3_S", "IQ2_S",          "IQ4_XS",
                                       "I8",      "I16",    "I32",    "I64",   "F64",            "IQ1_M",
                                       "BF16",    "Q4_0_4_4 (removed)", "Q4_0_4_8 (removed)", "Q4_0_8_8 (removed)",
                                       "TQ1_0",   "TQ2_0",  "IQ4_NL_4_4 (removed)", "IQ4_NL_4_8 (removed)",
                                       "IQ4_NL_8_8 (removed)", "MXFP4"};
  return type < sizeof kNames / sizeof kNames[0] ? kNames[type] : "unknown";
}

// Printable ASCII of a name for messages ('?' for the rest).
void sanitize(char* s) {
  for (; *s; ++s)
    if (static_cast<unsigned char>(*s) < 0x20 || static_cast<unsigned char>(*s) >= 0x7F) *s = '?';
}

Status bad(const Parser& p, const char* key, const char* what) {
  return Status::error(StatusCode::kBadFormat, "%s: GGUF key %s %s", p.name(), key, what);
}

Status array_header(Parser& p, const char* key, std::uint32_t* type, std::uint64_t* count) {
  POCKETLM_TRY(p.u32(type));
  POCKETLM_TRY(p.u64(count));
  if (*type >= kValueTypeCount)
    return Status::error(StatusCode::kBadFormat, "%s: GGUF key %s is an array of value type %u, which GGUF does not define",
                         p.name(), key, static_cast<unsigned>(*type));
  // The smallest an element can be: its fixed size, a string's 8-byte length, an array's 12-byte header.
  const int fixed = value_type_bytes(*type);
  const std::uint64_t least = fixed ? static_cast<std::uint64_t>(fixed) : *type == kString ? 8 : 12;
  std::uint64_t bytes = 0;
  if (!checked_mul(*count, least, &bytes) || bytes > p.left())
    return Status::error(StatusCode::kBadFormat,
                         "%s: GGUF key %s is an array of %llu %s values, more than the %llu bytes left in the file hold",
                         p.name(), key, static_cast<unsigned long long>(*count), value_type_name(*type),
                         static_cast<unsigned long long>(p.left()));
  return Status();
}

Status skip_value(Parser& p, const char* key, std::uint32_t type, int depth) {
  if (const int fixed = value_type_bytes(type)) return p.skip(static_cast<std::uint64_t>(fixed));
  if (type == kString) {
    std::uint64_t len = 0;
    POCKETLM_TRY(p.string_length(key, &len));
    return p.skip(len);
  }
  if (type != kArray)
    return Status::error(StatusCode::kBadFormat, "%s: GGUF key %s has value type %u, which GGUF does not define",
                         p.name(), key, static_cast<unsigned>(type));
  if (depth >= 2)
    return Status::error(StatusCode::kBadFormat, "%s: GGUF key %s nests arrays more than 2 levels deep", p.name(), key);
  std::uint32_t et = 0;
  std::uint64_t count = 0;
  POCKETLM_TRY(array_header(p, key, &et, &count));
  if (const int fixed = value_type_bytes(et)) return p.skip(count * static_cast<std::uint64_t>(fixed));
  for (std::uint64_t i = 0; i < count; ++i) POCKETLM_TRY(skip_value(p, key, et, depth + 1));
  return Status();
}

namespace {

bool is_int_type(std::uint32_t t) {
  return t == kUint8 || t == kInt8 || t == kUint16 || t == kInt16 || t == kUint32 || t == kInt32 || t == kUint64 ||
         t == kInt64;
}

}  // namespace

Status read_int(Parser& p, const char* key, std::uint32_t type, long long* out) {
  if (!is_int_type(type))
    return Status::error(StatusCode::kBadFormat, "%s: GGUF key %s has type %s, expected an integer", p.name(), key,
                         value_type_name(type));
  unsigned char b[8] = {};
  POCKETLM_TRY(p.take(b, static_cast<std::size_t>(value_type_bytes(type))));
  std::uint64_t u = 0;
  std::memcpy(&u, b, 8);
  switch (type) {
    case kInt8: *out = static_cast<std::int8_t>(b[0]); break;
    case kInt16: { std::int16_t v; std::memcpy(&v, b, 2); *out = v; break; }
    case kInt32: { std::int32_t v; std::memcpy(&v, b, 4); *out = v; break; }
    case kInt64: { std::int64_t v; std::memcpy(&v, b, 8); *out = v; break; }
    default:
      if (u > static_cast<std::uint64_t>(INT64_MAX))
        return Status::error(StatusCode::kBadFormat, "%s: GGUF key %s = %llu is too large", p.name(), key,
                             static_cast<unsigned long long>(u));
      *out = static_cast<long long>(u);
      break;
  }
  return Status();
}

Status read_float(Parser& p, const char* key, std::uint32_t type, float* out) {
  if (type == kFloat32) return p.take(out, 4);
  if (type == kFloat64) {
    double d = 0;
    POCKETLM_TRY(p.take(&d, 8));
    *out = static_cast<float>(d);
    return Status();
  }
  return Status::error(StatusCode::kBadFormat, "%s: GGUF key %s has type %s, expected f32", p.name(), key,
                       value_type_name(type));
}

Status read_short_string(Parser& p, const char* key, std::uint32_t type, char* out, std::size_t cap) {
  if (type != kString)
    return Status::error(StatusCode::kBadFormat, "%s: GGUF key %s has type %s, expected a string", p.name(), key,
                         value_type_name(type));
  std::uint64_t len = 0;
  POCKETLM_TRY(p.string(key, out, cap, &len));
  sanitize(out);
  return Status();
}

Status read_header(Parser& p, std::uint64_t* tensor_count, std::uint64_t* kv_count) {
  std::uint32_t magic = 0, version = 0;
  POCKETLM_TRY(p.u32(&magic));
  POCKETLM_TRY(p.u32(&version));
  if (magic != kMagic)
    return Status::error(StatusCode::kBadFormat, "%s: not a GGUF file (magic 0x%08x)", p.name(),
                         static_cast<unsigned>(magic));
  if (version != kVersion)
    return Status::error(StatusCode::kUnsupported,
                         "%s: GGUF header field version = %u is not supported (pocketlm reads GGUF v3; re-convert it "
                         "with a current llama.cpp)",
                         p.name(), static_cast<unsigned>(version));
  POCKETLM_TRY(p.u64(tensor_count));
  POCKETLM_TRY(p.u64(kv_count));
  // A key-value pair takes at least 12 bytes (empty key, type, smallest value 1 byte: 13); a
  // tensor info at least 8 + 4 + 8 + 4 + 8 = 32.
  if (*kv_count > p.left() / 13)
    return Status::error(StatusCode::kBadFormat,
                         "%s: GGUF header field metadata_kv_count = %llu cannot fit in the %llu bytes of the file",
                         p.name(), static_cast<unsigned long long>(*kv_count),
                         static_cast<unsigned long long>(p.left() + 24));
  if (*tensor_count > p.left() / 32)
    return Status::error(StatusCode::kBadFormat,
                         "%s: GGUF header field tensor_count = %llu cannot fit in the %llu bytes of the file", p.name(),
                         static_cast<unsigned long long>(*tensor_count), static_cast<unsigned long long>(p.left() + 24));
  return Status();
}

}  // namespace gguf
}  // namespace pocketlm
