#include "pocketlm/format/llama2c_reader.h"

#include <cstring>

#include "pocketlm/base/checked.h"

namespace pocketlm {

namespace {

// A little-endian int32 field (int is 32 bits on every target: base/checked.h).
int load_i32(const unsigned char* p) {
  std::int32_t v;
  std::memcpy(&v, p, 4);
  return static_cast<int>(v);
}

Status bad(const Storage& s, const char* field, long long value, const char* why) {
  return Status::error(StatusCode::kBadFormat, "%s: header field %s = %lld %s", s.name(), field, value, why);
}

Status validate_config(const Storage& s, const int raw[7], ModelConfig* c) {
  static const char* const kNames[] = {"dim", "hidden_dim", "n_layers", "n_heads", "n_kv_heads", "vocab_size",
                                       "seq_len"};
  for (int i = 0; i < 7; ++i)
    if (raw[i] <= 0) return bad(s, kNames[i], raw[i], "must be positive");
  *c = ModelConfig{raw[0], raw[1], raw[2], raw[3], raw[4], raw[5], raw[6]};
  if (c->n_layers > kMaxLayers)
    return Status::error(StatusCode::kBadFormat, "%s: header field n_layers = %d is above %d, the most pocketlm runs",
                         s.name(), c->n_layers, kMaxLayers);
  if (c->dim % c->n_heads != 0)
    return Status::error(StatusCode::kBadFormat, "%s: header field dim = %d is not a multiple of n_heads = %d",
                         s.name(), c->dim, c->n_heads);
  if (c->n_kv_heads > c->n_heads || c->n_heads % c->n_kv_heads != 0)
    return Status::error(StatusCode::kBadFormat, "%s: header field n_kv_heads = %d does not divide n_heads = %d",
                         s.name(), c->n_kv_heads, c->n_heads);
  if (c->head_size() % 2 != 0)
    return Status::error(StatusCode::kBadFormat,
                         "%s: header field head_size = dim / n_heads = %d is odd (RoPE rotates pairs)", s.name(),
                         c->head_size());
  return Status();
}

// Lays out `order` starting at `offset`; returns the end offset in *end. v2 files store every
// matrix as q80 and keep norm vectors in fp32.
Status layout(const Storage& s, ModelSpec* spec, const TensorRole* order, int count, std::uint64_t offset,
              std::uint64_t* end) {
  for (int i = 0; i < count; ++i) {
    const TensorRole role = order[i];
    std::uint64_t rows = 0, cols = 0;
    role_shape(spec->config, spec->role(role), &rows, &cols);
    const bool q80 = spec->format == ModelFormat::kLlama2cV2 && rows > 1;
    if (!spec->add_role(role, q80 ? TensorType::kQ80 : TensorType::kF32, q80 ? spec->group_size : 0, rows, cols,
                        offset, &offset))
      return Status::error(StatusCode::kBadFormat,
                           "%s: header implies a size that overflows 64 bits (tensor %s, dim %d, hidden_dim %d, "
                           "n_layers %d, vocab_size %d)",
                           s.name(), spec->role(role).name, spec->config.dim, spec->config.hidden_dim,
                           spec->config.n_layers, spec->config.vocab_size);
  }
  *end = offset;
  return Status();
}

}  // namespace

Status read_llama2c_spec(Storage& storage, ModelSpec* spec) {
  spec->reset();  // in place: a ModelSpec temporary is ~1 KiB of a small task stack
  const std::uint64_t file_bytes = storage.size();
  spec->file_bytes = file_bytes;
  unsigned char header[kLlama2cHeaderBytes] = {};
  if (file_bytes < 28)
    return Status::error(StatusCode::kBadFormat,
                         "%s: file is %llu bytes, too short for a llama2.c header (at least 28 bytes)",
                         storage.name(), static_cast<unsigned long long>(file_bytes));
  // Read the 28 bytes every format starts with, and the rest of a 256-byte header only when
  // the magic says there is one: a v0 file's tensors begin at byte 28 and are read once, later.
  POCKETLM_TRY(storage.read(0, header, 28));

  int raw[7];
  const std::uint32_t magic = static_cast<std::uint32_t>(load_i32(header));
  if (magic == kLlama2cMagic) {
    if (file_bytes < kLlama2cHeaderBytes)
      return Status::error(StatusCode::kBadFormat, "%s: file is %llu bytes, shorter than its 256-byte header",
                           storage.name(), static_cast<unsigned long long>(file_bytes));
    POCKETLM_TRY(storage.read(28, header + 28, kLlama2cHeaderBytes - 28));
    const std::int32_t version = load_i32(header + 4);
    if (version != 1 && version != 2)
      return bad(storage, "version", version, "is not supported (expected 1 = fp32 or 2 = q80)");
    spec->format = version == 1 ? ModelFormat::kLlama2cV1 : ModelFormat::kLlama2cV2;
    for (int i = 0; i < 7; ++i) raw[i] = load_i32(header + 8 + 4 * i);
    const unsigned flag = header[36];
    if (flag > 1) return bad(storage, "shared_classifier", flag, "must be 0 or 1");
    spec->shared_classifier = flag == 1;
    spec->header_bytes = kLlama2cHeaderBytes;
  } else {
    spec->format = ModelFormat::kLlama2cV0;
    for (int i = 0; i < 7; ++i) raw[i] = load_i32(header + 4 * i);
    // v0 marks an unshared classifier with a negative vocab_size.
    if (raw[5] < 0 && raw[5] != INT32_MIN) {
      spec->shared_classifier = false;
      raw[5] = -raw[5];
    }
    spec->header_bytes = 28;
  }
  const Status config_status = validate_config(storage, raw, &spec->config);
  if (!config_status.ok()) {
    // A v0 file starts with dim, a small integer; four printable characters are far more
    // likely the magic of some other format than a dimension in the billions.
    bool printable = spec->format == ModelFormat::kLlama2cV0;
    for (int i = 0; i < 4; ++i) printable = printable && header[i] >= 0x20 && header[i] < 0x7F;
    if (printable)
      return Status::error(StatusCode::kBadFormat,
                           "%s: unknown magic 0x%08x ('%c%c%c%c'); llama2.c v1/v2 files start with 0x%08x ('24ka'), "
                           "v0 files with a positive dim",
                           storage.name(), static_cast<unsigned>(magic), header[0], header[1], header[2], header[3],
                           static_cast<unsigned>(kLlama2cMagic));
    return config_status;
  }
  const ModelConfig& c = spec->config;

  if (spec->format == ModelFormat::kLlama2cV2) {
    const int gs = load_i32(header + 37);  // unaligned, as export.py writes it
    if (gs <= 0) return bad(storage, "group_size", gs, "must be positive");
    if (c.dim % gs != 0)
      return Status::error(StatusCode::kBadFormat, "%s: header field group_size = %d does not divide dim = %d",
                           storage.name(), gs, c.dim);
    if (c.hidden_dim % gs != 0)
      return Status::error(StatusCode::kBadFormat,
                           "%s: header field group_size = %d does not divide hidden_dim = %d (runq.c would "
                           "compute garbage here; re-export with a group size that divides both)",
                           storage.name(), gs, c.hidden_dim);
    spec->group_size = gs;
  }

  using K = TensorRole;
  static const K kV0[] = {K::kTokenEmbedding, K::kRmsAtt, K::kWq, K::kWk, K::kWv, K::kWo, K::kRmsFfn,
                          K::kW1, K::kW2, K::kW3, K::kRmsFinal, K::kFreqCisReal, K::kFreqCisImag, K::kWcls};
  static const K kV1[] = {K::kRmsAtt, K::kRmsFfn, K::kRmsFinal, K::kTokenEmbedding, K::kWq, K::kWk, K::kWv,
                          K::kWo, K::kW1, K::kW2, K::kW3, K::kWcls};
  const K* order = spec->format == ModelFormat::kLlama2cV0 ? kV0 : kV1;
  int count = spec->format == ModelFormat::kLlama2cV0 ? 14 : 12;
  if (spec->shared_classifier) --count;  // wcls is last in both orders

  std::uint64_t expected = 0;
  POCKETLM_TRY(layout(storage, spec, order, count, spec->header_bytes, &expected));
  if (file_bytes < expected)
    return Status::error(StatusCode::kBadFormat,
                         "%s: file is truncated: the header (dim %d, hidden_dim %d, n_layers %d, vocab_size %d) "
                         "implies %llu bytes but the file has %llu",
                         storage.name(), c.dim, c.hidden_dim, c.n_layers, c.vocab_size,
                         static_cast<unsigned long long>(expected), static_cast<unsigned long long>(file_bytes));
  if (file_bytes > expected)
    return Status::error(StatusCode::kBadFormat,
                         "%s: file has %llu extra byte(s) after the last tensor: the header implies %llu bytes but "
                         "the file has %llu",
                         storage.name(), static_cast<unsigned long long>(file_bytes - expected),
                         static_cast<unsigned long long>(expected), static_cast<unsigned long long>(file_bytes));
  return Status();
}

}  // namespace pocketlm
