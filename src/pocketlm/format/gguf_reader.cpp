#include "pocketlm/format/gguf_reader.h"

#include <cstring>
#include <initializer_list>

#include "pocketlm/base/checked.h"
#include "pocketlm/base/format.h"
#include "pocketlm/format/architecture.h"
#include "pocketlm/format/gguf.h"
#include "pocketlm/format/gguf_parser.h"

namespace pocketlm {

namespace {

using namespace gguf;

constexpr int kIntMax = 2147483647;  // INT32_MAX is a long on some targets (arm-none-eabi); messages print %d
// The passes below run one after another from read_gguf_spec; each keeps its own frame (the
// metadata, the per-role table, the layer bitmap) so that no frame is large on a small stack.
#define POCKETLM_FRAME __attribute__((noinline))
constexpr std::size_t kKeyCap = 64;    // every key pocketlm reads is shorter
constexpr std::size_t kNameCap = 64;   // every tensor name pocketlm reads is shorter
constexpr std::size_t kShortCap = 16;  // architecture, tokenizer model, rope scaling type

// Keys pocketlm reads, each at most once, besides an architecture's integer keys
// (format/architecture.h). kKEps..kKRopeScaling are under the architecture's prefix
// ("llama.rope.freq_base"): their entries here are the part after "<architecture>.".
enum Known : int {
  kKArch, kKAlign, kKEps, kKTheta, kKRopeDims, kKRopeScaling, kKTokModel, kKTokens, kKScores, kKTypes, kKBos, kKEos,
  kKnownCount
};
const char* const kKnownKeys[kKnownCount] = {
    key::kArchitecture, key::kAlignment, "attention.layer_norm_rms_epsilon", "rope.freq_base", "rope.dimension_count",
    "rope.scaling.type", key::kTokenizerModel, key::kTokens, key::kScores, key::kTokenTypes, key::kBosId, key::kEosId};
constexpr bool under_architecture(int k) { return k >= kKEps && k <= kKRopeScaling; }

// What the metadata said (counts -1 when absent).
struct Meta {
  bool seen[kKnownCount] = {};
  const Architecture* arch = nullptr;  // from general.architecture, which comes before its keys
  bool arch_seen[kMaxArchitectureKeys] = {};
  long long arch_ints[kMaxArchitectureKeys] = {};
  char arch_name[kShortCap] = "";
  char tok_model[kShortCap] = "";
  char rope_scaling[kShortCap] = "";
  std::uint64_t alignment = kDefaultAlignment;
  long long ints[kKnownCount] = {};  // integer keys by Known index
  float eps = 1e-5f, theta = 10000.0f;
  std::uint64_t tokens_count = 0, tokens_offset = 0, scores_count = 0, scores_offset = 0;
  std::uint64_t types_count = 0, types_offset = 0;
  std::uint64_t piece_bytes = 0, max_piece = 0;
};

// tokenizer.ggml.tokens: an array of strings, scanned once for the bytes the tokenizer's tables
// need (each U+2581 becomes one space) and the longest piece; read again at load.
POCKETLM_FRAME Status scan_tokens(Parser& p, const char* key, std::uint32_t type, Meta* m) {
  if (type != kArray) return bad(p, key, "is not an array");
  std::uint32_t et = 0;
  std::uint64_t count = 0;
  POCKETLM_TRY(array_header(p, key, &et, &count));
  if (et != kString)
    return Status::error(StatusCode::kBadFormat, "%s: GGUF key %s is an array of %s, expected strings", p.name(), key,
                         value_type_name(et));
  m->tokens_count = count;
  m->tokens_offset = p.offset();
  std::uint64_t total = 0;
  unsigned char chunk[32];
  for (std::uint64_t i = 0; i < count; ++i) {
    std::uint64_t len = 0;
    POCKETLM_TRY(p.string_length(key, &len));
    std::uint64_t piece = 0;
    MarkToSpace conv;
    auto count_byte = [&piece](unsigned char) { ++piece; };
    for (std::uint64_t done = 0; done < len;) {
      const std::size_t n = len - done < sizeof chunk ? static_cast<std::size_t>(len - done) : sizeof chunk;
      POCKETLM_TRY(p.take(chunk, n));
      for (std::size_t k = 0; k < n; ++k) conv.push(chunk[k], count_byte);
      done += n;
    }
    conv.flush(count_byte);
    total += piece;  // cannot overflow: piece <= len and the lengths fit in the file
    if (piece > m->max_piece) m->max_piece = piece;
  }
  m->piece_bytes = total;
  return Status();
}

// An array of 4-byte values of `want` (scores f32, token types i32): where it is and how long.
Status scan_array4(Parser& p, const char* key, std::uint32_t type, ValueType want, std::uint64_t* count,
                   std::uint64_t* offset) {
  if (type != kArray) return bad(p, key, "is not an array");
  std::uint32_t et = 0;
  POCKETLM_TRY(array_header(p, key, &et, count));
  if (et != want)
    return Status::error(StatusCode::kBadFormat, "%s: GGUF key %s is an array of %s, expected %s", p.name(), key,
                         value_type_name(et), value_type_name(want));
  *offset = p.offset();
  return p.skip(*count * 4);
}

// "<architecture>.<suffix>" into out (kKeyCap), for messages.
const char* arch_key(const Meta& m, const char* suffix, char* out) {
  format_to(out, kKeyCap, "%s.%s", m.arch_name, suffix);
  return out;
}

// Which key `key` is: a Known index (k), an index into the architecture's keys (ak), or
// neither. A key under the prefix of an architecture pocketlm knows, before
// general.architecture has said which one this file is, is an error.
Status match_key(const Parser& p, const char* key, const Meta& m, int* k, int* ak) {
  *k = kKnownCount;
  *ak = -1;
  for (int j = 0; j < kKnownCount; ++j)
    if (!under_architecture(j) && std::strcmp(key, kKnownKeys[j]) == 0) *k = j;
  const char* dot = std::strchr(key, '.');
  if (*k != kKnownCount || !dot) return Status();
  char prefix[kShortCap];
  const auto len = static_cast<std::size_t>(dot - key);
  if (len >= sizeof prefix) return Status();
  std::memcpy(prefix, key, len);
  prefix[len] = '\0';
  if (!m.arch) {
    if (find_architecture(prefix))
      return Status::error(StatusCode::kBadFormat,
                           "%s: GGUF key %s comes before general.architecture, which pocketlm reads first (llama.cpp "
                           "writes it first)",
                           p.name(), key);
    return Status();
  }
  if (std::strcmp(prefix, m.arch->name) != 0) return Status();
  for (int j = kKEps; j <= kKRopeScaling; ++j)
    if (std::strcmp(dot + 1, kKnownKeys[j]) == 0) *k = j;
  for (int i = 0; i < m.arch->key_count; ++i)
    if (std::strcmp(dot + 1, m.arch->keys[i].suffix) == 0) *ak = i;
  return Status();
}

POCKETLM_FRAME Status read_metadata(Parser& p, std::uint64_t kv_count, Meta* m) {
  char key[kKeyCap];
  for (std::uint64_t i = 0; i < kv_count; ++i) {
    std::uint64_t key_len = 0;
    POCKETLM_TRY(p.string("metadata key", key, sizeof key, &key_len));
    sanitize(key);
    if (key_len > kMaxKeyBytes)
      return Status::error(StatusCode::kBadFormat, "%s: GGUF metadata key %llu ('%s...') is %llu bytes long (at most %llu)",
                           p.name(), static_cast<unsigned long long>(i), key, static_cast<unsigned long long>(key_len),
                           static_cast<unsigned long long>(kMaxKeyBytes));
    std::uint32_t type = 0;
    POCKETLM_TRY(p.u32(&type));
    if (type >= kValueTypeCount)
      return Status::error(StatusCode::kBadFormat, "%s: GGUF key %s has value type %u, which GGUF does not define",
                           p.name(), key, static_cast<unsigned>(type));
    int k = kKnownCount, ak = -1;
    if (key_len < kKeyCap) POCKETLM_TRY(match_key(p, key, *m, &k, &ak));
    if (ak >= 0) {
      if (m->arch_seen[ak]) return bad(p, key, "appears twice");
      m->arch_seen[ak] = true;
      POCKETLM_TRY(read_int(p, key, type, &m->arch_ints[ak]));
      continue;
    }
    if (k == kKnownCount) {
      POCKETLM_TRY(skip_value(p, key, type, 0));
      continue;
    }
    if (m->seen[k]) return bad(p, key, "appears twice");
    m->seen[k] = true;
    switch (k) {
      case kKArch:
        POCKETLM_TRY(read_short_string(p, key, type, m->arch_name, sizeof m->arch_name));
        m->arch = find_architecture(m->arch_name);
        if (!m->arch) {
          char names[64];
          architecture_names(names, sizeof names);
          return Status::error(StatusCode::kUnsupported,
                               "%s: GGUF key general.architecture = '%s' is not supported (pocketlm runs: %s)",
                               p.name(), m->arch_name, names);
        }
        break;
      case kKTokModel: POCKETLM_TRY(read_short_string(p, key, type, m->tok_model, sizeof m->tok_model)); break;
      case kKRopeScaling: POCKETLM_TRY(read_short_string(p, key, type, m->rope_scaling, sizeof m->rope_scaling)); break;
      case kKEps: POCKETLM_TRY(read_float(p, key, type, &m->eps)); break;
      case kKTheta: POCKETLM_TRY(read_float(p, key, type, &m->theta)); break;
      case kKTokens: POCKETLM_TRY(scan_tokens(p, key, type, m)); break;
      case kKScores: POCKETLM_TRY(scan_array4(p, key, type, kFloat32, &m->scores_count, &m->scores_offset)); break;
      case kKTypes: POCKETLM_TRY(scan_array4(p, key, type, kInt32, &m->types_count, &m->types_offset)); break;
      default: POCKETLM_TRY(read_int(p, key, type, &m->ints[k])); break;
    }
  }
  return Status();
}

// The architecture's integer keys into the config: positive, and present where required (an
// absent head_count_kv is head_count, as in llama.cpp; others stay 0). The vocabulary key
// goes to *vocab (-1 when absent), checked against the embedding table later.
Status read_arch_keys(const Parser& p, const Meta& m, ModelConfig* c, long long* vocab) {
  int vocab_value = -1;
  for (int i = 0; i < m.arch->key_count; ++i) {
    const ArchitectureKey& k = m.arch->keys[i];
    char name[kKeyCap];
    // The vocabulary is the embedding table's rows; the key is only checked against them.
    int* out = k.field == ConfigField::kVocab ? &vocab_value : config_field(c, k.field);
    if (!m.arch_seen[i]) {
      if (k.required)
        return Status::error(StatusCode::kBadFormat, "%s: GGUF key %s is missing (a %s model needs it)", p.name(),
                             arch_key(m, k.suffix, name), m.arch->name);
      if (k.field == ConfigField::kKvHeads) *out = c->n_heads;
      continue;
    }
    if (m.arch_ints[i] <= 0 || m.arch_ints[i] > INT32_MAX)
      return Status::error(StatusCode::kBadFormat, "%s: GGUF key %s = %lld must be in [1, %d]", p.name(),
                           arch_key(m, k.suffix, name), m.arch_ints[i], kIntMax);
    *out = static_cast<int>(m.arch_ints[i]);
  }
  *vocab = vocab_value;
  return Status();
}

bool finite_positive(float v) { return v > 0.0f && v <= 3.4028234663852886e38f; }

Status read_config(const Parser& p, const Meta& m, ModelConfig* c, long long* vocab) {
  if (!m.arch) return Status::error(StatusCode::kBadFormat, "%s: GGUF key general.architecture is missing", p.name());
  POCKETLM_TRY(read_arch_keys(p, m, c, vocab));
  char a[kKeyCap], b[kKeyCap];
  // Sizes every Llama-family kind has; an architecture row that reads none of one is a bug.
  if (c->dim <= 0 || c->n_layers <= 0 || c->n_heads <= 0 || c->n_kv_heads <= 0 || c->seq_len <= 0)
    return Status::error(StatusCode::kUnsupported,
                         "%s: architecture '%s' does not give dim, block_count, head counts and context_length",
                         p.name(), m.arch->name);
  if (c->n_layers > kMaxLayers)
    return Status::error(StatusCode::kBadFormat, "%s: GGUF key %s = %d is more than %d layers", p.name(),
                         arch_key(m, "block_count", a), c->n_layers, kMaxLayers);
  // A kind parameter that sizes a tensor of all layers (an Extent n_layers x P) must keep
  // n_layers x P an int, as the kind indexes it.
  for (int i = 0; i < m.arch->key_count; ++i) {
    const ArchitectureKey& k = m.arch->keys[i];
    if (k.field < ConfigField::kKindParam0) continue;
    const int v = config_value(*c, k.field);
    if (static_cast<long long>(c->n_layers) * v > kIntMax)
      return Status::error(StatusCode::kBadFormat, "%s: GGUF key %s = %d times %s = %d is more than %d per-layer values",
                           p.name(), arch_key(m, k.suffix, a), v, arch_key(m, "block_count", b), c->n_layers, kIntMax);
  }
  if (c->dim % c->n_heads != 0)
    return Status::error(StatusCode::kBadFormat, "%s: GGUF key %s = %d is not a multiple of %s = %d", p.name(),
                         arch_key(m, "embedding_length", a), c->dim, arch_key(m, "attention.head_count", b), c->n_heads);
  if (c->n_kv_heads > c->n_heads || c->n_heads % c->n_kv_heads != 0)
    return Status::error(StatusCode::kBadFormat, "%s: GGUF key %s = %d does not divide %s = %d", p.name(),
                         arch_key(m, "attention.head_count_kv", a), c->n_kv_heads,
                         arch_key(m, "attention.head_count", b), c->n_heads);
  if (c->head_size() % 2 != 0)
    return Status::error(StatusCode::kBadFormat, "%s: GGUF head size %s / %s = %d is odd (RoPE rotates pairs)", p.name(),
                         arch_key(m, "embedding_length", a), arch_key(m, "attention.head_count", b), c->head_size());
  if (m.seen[kKRopeDims] && m.ints[kKRopeDims] != c->head_size())
    return Status::error(StatusCode::kUnsupported,
                         "%s: GGUF key %s = %lld differs from the head size %d (partial RoPE is not supported)",
                         p.name(), arch_key(m, kKnownKeys[kKRopeDims], a), m.ints[kKRopeDims], c->head_size());
  if (m.seen[kKRopeScaling] && std::strcmp(m.rope_scaling, "none") != 0)
    return Status::error(StatusCode::kUnsupported, "%s: GGUF key %s = '%s' is not supported (only 'none')", p.name(),
                         arch_key(m, kKnownKeys[kKRopeScaling], a), m.rope_scaling);
  if (!finite_positive(m.eps))
    return Status::error(StatusCode::kBadFormat, "%s: GGUF key %s = %f must be a positive finite number", p.name(),
                         arch_key(m, kKnownKeys[kKEps], a), static_cast<double>(m.eps));
  if (!finite_positive(m.theta))
    return Status::error(StatusCode::kBadFormat, "%s: GGUF key %s = %f must be a positive finite number", p.name(),
                         arch_key(m, kKnownKeys[kKTheta], a), static_cast<double>(m.theta));
  c->rms_eps = m.eps;
  c->rope_theta = m.theta;
  return Status();
}

// What the tensor table says about one role.
struct RoleSeen {
  std::uint32_t count = 0;
  std::uint32_t ggml_type = 0;
  std::uint64_t rows = 0, cols = 0;
  std::uint64_t off[2] = {UINT64_MAX, UINT64_MAX};  // data offsets of layers 0 and 1
  std::uint64_t stride = 0;
};

// One tensor info: its name, role and layer, shape, type and offset.
struct TensorEntry {
  char name[kNameCap];
  TensorRole role;
  int layer;
  std::uint32_t ggml_type;
  std::uint64_t rows, cols, offset;
};

// "blk.12.attn_q.weight" -> kWq, 12; false for any other name.
bool match_name(const char* name, const Architecture& arch, TensorRole* role, int* layer) {
  for (int r = 0; r < kTensorRoleCount; ++r) {
    if (!(arch.roles & role_bit(static_cast<TensorRole>(r)))) continue;
    const RoleInfo& info = role_info(arch, static_cast<TensorRole>(r));
    if (!info.gguf_name) continue;
    if (!info.per_layer) {
      if (std::strcmp(name, info.gguf_name) != 0) continue;
      *role = static_cast<TensorRole>(r);
      *layer = -1;
      return true;
    }
    // "blk.%d<suffix>": decimal digits without a leading zero, at most 3 (kMaxLayers = 512).
    if (std::strncmp(name, "blk.", 4) != 0) continue;
    const char* d = name + 4;
    int n = 0, digits = 0;
    while (d[digits] >= '0' && d[digits] <= '9' && digits < 4) n = n * 10 + (d[digits++] - '0');
    if (digits == 0 || digits > 3 || (digits > 1 && d[0] == '0')) continue;
    if (std::strcmp(d + digits, info.gguf_name + 6) != 0) continue;  // gguf_name + 6: after "blk.%d"
    *role = static_cast<TensorRole>(r);
    *layer = n;
    return true;
  }
  return false;
}


// Reads one tensor info and checks what can be checked on its own.
// `index` counts the tensor infos from 0, for messages.
POCKETLM_FRAME Status read_tensor_entry(Parser& p, std::uint64_t index, const ModelConfig& c, const Architecture& arch,
                                        std::uint32_t alignment, TensorEntry* e) {
  std::uint64_t len = 0;
  char what[40];
  format_to(what, sizeof what, "tensor %llu name", static_cast<unsigned long long>(index));
  POCKETLM_TRY(p.string(what, e->name, sizeof e->name, &len));
  sanitize(e->name);
  std::uint32_t n_dims = 0;
  POCKETLM_TRY(p.u32(&n_dims));
  if (n_dims < 1 || n_dims > static_cast<std::uint32_t>(kMaxDims))
    return Status::error(StatusCode::kBadFormat, "%s: GGUF tensor %s has %u dimensions (1 to %d)", p.name(), e->name,
                         static_cast<unsigned>(n_dims), kMaxDims);
  std::uint64_t dims[kMaxDims] = {1, 1, 1, 1};
  for (std::uint32_t d = 0; d < n_dims; ++d) {
    POCKETLM_TRY(p.u64(&dims[d]));
    if (dims[d] == 0 || dims[d] > static_cast<std::uint64_t>(INT64_MAX))
      return Status::error(StatusCode::kBadFormat, "%s: GGUF tensor %s dimension %u = %llu is out of range", p.name(),
                           e->name, static_cast<unsigned>(d), static_cast<unsigned long long>(dims[d]));
  }
  POCKETLM_TRY(p.u32(&e->ggml_type));
  POCKETLM_TRY(p.u64(&e->offset));
  if (len >= kNameCap || !match_name(e->name, arch, &e->role, &e->layer))
    return Status::error(StatusCode::kBadFormat,
                         "%s: GGUF tensor %s%s is not a tensor of a %s model (token_embd.weight, "
                         "blk.N.attn_q.weight, ..., output_norm.weight, output.weight)",
                         p.name(), e->name, len >= kNameCap ? "..." : "", arch.name);
  if (e->layer >= c.n_layers)
    return Status::error(StatusCode::kBadFormat, "%s: GGUF tensor %s is for layer %d but %s.block_count = %d", p.name(),
                         e->name, e->layer, arch.name, c.n_layers);
  if (dims[2] != 1 || dims[3] != 1)
    return Status::error(StatusCode::kBadFormat, "%s: GGUF tensor %s has shape [%llu, %llu, %llu, %llu]; expected 2 dimensions",
                         p.name(), e->name, static_cast<unsigned long long>(dims[0]),
                         static_cast<unsigned long long>(dims[1]), static_cast<unsigned long long>(dims[2]),
                         static_cast<unsigned long long>(dims[3]));
  e->cols = dims[0];
  e->rows = dims[1];
  TensorType type = TensorType::kF32;
  if (!type_from_ggml(e->ggml_type, &type))  // the type table's rows with a ggml id
    return Status::error(StatusCode::kUnsupported,
                         "%s: GGUF tensor %s has type %s (%u), which pocketlm does not read (it reads F32, F16, Q8_0, "
                         "Q4_0 and IQ4_XS)",
                         p.name(), e->name, ggml_type_name(e->ggml_type), static_cast<unsigned>(e->ggml_type));
  // rmsnorm reads its weights as an f32 vector (llama.cpp writes norms F32 too); refused here,
  // where the file and the tensor's name are known.
  const RoleInfo& info = role_info(arch, e->role);
  if (info.use == TensorUse::kNorm && type != TensorType::kF32)
    return Status::error(StatusCode::kUnsupported, "%s: GGUF tensor %s has type %s; norm weights must be F32",
                         p.name(), e->name, ggml_type_name(e->ggml_type));
  const int block = block_elements(type, 0);
  if (e->cols % static_cast<std::uint64_t>(block) != 0)
    return Status::error(StatusCode::kBadFormat,
                         "%s: GGUF tensor %s has %llu columns, not a multiple of %s's block of %d", p.name(), e->name,
                         static_cast<unsigned long long>(e->cols), ggml_type_name(e->ggml_type), block);
  if (e->offset % alignment != 0)
    return Status::error(StatusCode::kBadFormat,
                         "%s: GGUF tensor %s has data offset %llu, not a multiple of the alignment %u", p.name(), e->name,
                         static_cast<unsigned long long>(e->offset), static_cast<unsigned>(alignment));
  // The shape a llama model of this config has (the vocabulary is checked once it is known).
  std::uint64_t rows = 0, cols = 0;
  role_shape(c, info, &rows, &cols);
  const bool vocab_rows = info.rows == Extent::kVocab;
  if (e->cols != cols || (!vocab_rows && e->rows != rows)) {
    // The config fields the expected shape comes from: "(columns: n_layers x <a kind parameter>)".
    const bool cols_wrong = e->cols != cols;
    const Extent wrong = cols_wrong ? info.cols : info.rows;
    char wrong_name[48];
    char expected_rows[24] = "vocab_size";
    if (!vocab_rows) format_to(expected_rows, sizeof expected_rows, "%llu", static_cast<unsigned long long>(rows));
    return Status::error(StatusCode::kBadFormat,
                         "%s: GGUF tensor %s has shape [%llu, %llu] (rows, columns); expected [%s, %llu] (%s: %s)",
                         p.name(), e->name, static_cast<unsigned long long>(e->rows),
                         static_cast<unsigned long long>(e->cols), expected_rows, static_cast<unsigned long long>(cols),
                         cols_wrong ? "columns" : "rows", extent_name(wrong, arch.param_names, wrong_name, sizeof wrong_name));
  }
  return Status();
}

// First pass over the tensor infos: one RoleSeen per role.
POCKETLM_FRAME Status scan_tensors(Parser& p, std::uint64_t count, const ModelConfig& c, const Architecture& arch,
                                   std::uint32_t alignment, RoleSeen* seen) {
  TensorEntry e;
  for (std::uint64_t i = 0; i < count; ++i) {
    POCKETLM_TRY(read_tensor_entry(p, i, c, arch, alignment, &e));
    RoleSeen& s = seen[static_cast<int>(e.role)];
    if (s.count > 0 && (s.ggml_type != e.ggml_type || s.rows != e.rows)) {
      char first[kNameCap];
      gguf_tensor_name(role_info(arch, e.role), s.off[0] != UINT64_MAX ? 0 : -1, first, sizeof first);
      return Status::error(StatusCode::kUnsupported,
                           "%s: GGUF tensor %s has type %s and %llu rows but an earlier %s has %s and %llu: pocketlm "
                           "needs one type per kind of tensor",
                           p.name(), e.name, ggml_type_name(e.ggml_type), static_cast<unsigned long long>(e.rows),
                           role_info(arch, e.role).gguf_name, ggml_type_name(s.ggml_type),
                           static_cast<unsigned long long>(s.rows));
    }
    if (s.count > 0 && e.layer < 0)
      return Status::error(StatusCode::kBadFormat, "%s: GGUF tensor %s appears twice", p.name(), e.name);
    ++s.count;
    s.ggml_type = e.ggml_type;
    s.rows = e.rows;
    s.cols = e.cols;
    const int slot = e.layer < 0 ? 0 : e.layer;
    if (slot < 2) {
      if (s.off[slot] != UINT64_MAX)
        return Status::error(StatusCode::kBadFormat, "%s: GGUF tensor %s appears twice", p.name(), e.name);
      s.off[slot] = e.offset;
    }
  }
  return Status();
}

// Second pass: every per-layer tensor at base + layer * stride, each layer once.
POCKETLM_FRAME Status check_layers(Parser& p, std::uint64_t count, const ModelConfig& c, const Architecture& arch,
                                   std::uint32_t alignment, const RoleSeen* seen) {
  // One bit per layer for each per-layer role (by its layer_slot).
  constexpr int kWords = kMaxLayers / 64;
  std::uint64_t present[kLayerRoleCount][kWords] = {};
  TensorEntry e;
  for (std::uint64_t i = 0; i < count; ++i) {
    POCKETLM_TRY(read_tensor_entry(p, i, c, arch, alignment, &e));
    if (e.layer < 0) continue;
    if (!is_per_layer(e.role)) return Status::error(StatusCode::kBadFormat, "%s: GGUF tensor %s: unexpected layer", p.name(), e.name);
    std::uint64_t& word = present[layer_slot(e.role)][e.layer / 64];
    const std::uint64_t bit = std::uint64_t{1} << (e.layer % 64);
    if (word & bit) return Status::error(StatusCode::kBadFormat, "%s: GGUF tensor %s appears twice", p.name(), e.name);
    word |= bit;
    const RoleSeen& s = seen[static_cast<int>(e.role)];
    // base + layer * stride cannot overflow: base + stride fits (both are offsets in a u64),
    // but a product can; compare without computing it when it would.
    std::uint64_t expect = 0;
    if (!checked_mul(s.stride, static_cast<std::uint64_t>(e.layer), &expect) ||
        !checked_add(expect, s.off[0], &expect) || expect != e.offset)
      return Status::error(StatusCode::kUnsupported,
                           "%s: GGUF tensor %s is at data offset %llu, not %llu: pocketlm needs the layers of one kind "
                           "of tensor evenly spaced (as llama.cpp writes them)",
                           p.name(), e.name, static_cast<unsigned long long>(e.offset),
                           static_cast<unsigned long long>(expect));
  }
  // A per-layer role the file holds is there for every layer (a required role the file lacks
  // is refused before this pass).
  for (int r = 0; r < kTensorRoleCount; ++r) {
    const auto role = static_cast<TensorRole>(r);
    if (!is_per_layer(role) || seen[r].count == 0) continue;
    for (int l = 0; l < c.n_layers; ++l) {
      if (present[layer_slot(role)][l / 64] & (std::uint64_t{1} << (l % 64))) continue;
      char name[kNameCap];
      gguf_tensor_name(role_info(arch, role), l, name, sizeof name);
      return Status::error(StatusCode::kBadFormat, "%s: GGUF tensor %s is missing", p.name(), name);
    }
  }
  return Status();
}

// Refuses overlapping tensors: the spec's tensors in offset order (a merge of the roles, each
// evenly spaced), each starting at or after the end of the one before.
POCKETLM_FRAME Status check_overlaps(const Storage& s, const ModelSpec& spec) {
  int next[kTensorRoleCount] = {};
  std::uint64_t prev_end = 0;
  TensorRole prev_role = TensorRole::kCount;
  int prev_layer = -1;
  for (;;) {
    int best = -1;
    TensorInfo best_t;
    for (int r = 0; r < kTensorRoleCount; ++r) {
      const auto role = static_cast<TensorRole>(r);
      if (!spec.has(role)) continue;
      const int layers = is_per_layer(role) ? spec.config.n_layers : 1;
      if (next[r] >= layers) continue;
      const TensorInfo t = spec.tensor(role, next[r]);
      if (best < 0 || t.offset < best_t.offset) {
        best = r;
        best_t = t;
      }
    }
    if (best < 0) return Status();
    ++next[best];
    if (best_t.offset < prev_end) {
      char a[kNameCap], b[kNameCap];
      gguf_tensor_name(spec.role(prev_role), prev_layer, a, sizeof a);
      gguf_tensor_name(*best_t.schema, best_t.layer, b, sizeof b);
      return Status::error(StatusCode::kBadFormat,
                           "%s: GGUF tensor %s (file offset %llu) overlaps tensor %s, which ends at offset %llu",
                           s.name(), b, static_cast<unsigned long long>(best_t.offset), a,
                           static_cast<unsigned long long>(prev_end));
    }
    prev_end = best_t.offset + best_t.bytes();
    prev_role = best_t.role;
    prev_layer = best_t.layer;
  }
}

// The embedded tokenizer as the metadata describes it (checked against the vocabulary later).
Status describe_tokenizer(const Parser& p, const Meta& m, ModelSpec* spec) {
  EmbeddedTokenizer& t = spec->tokenizer;
  std::memcpy(t.model, m.tok_model, sizeof t.model);
  for (const int k : {static_cast<int>(kKBos), static_cast<int>(kKEos)})
    if (m.seen[k] && (m.ints[k] < 0 || m.ints[k] > INT32_MAX))
      return Status::error(StatusCode::kBadFormat, "%s: GGUF key %s = %lld is not a token id", p.name(), kKnownKeys[k],
                           m.ints[k]);
  if (m.seen[kKBos]) spec->config.bos_id = static_cast<int>(m.ints[kKBos]);
  if (m.seen[kKEos]) spec->config.eos_id = static_cast<int>(m.ints[kKEos]);
  if (!m.seen[kKTokens]) return Status();
  if (m.tokens_count > static_cast<std::uint64_t>(INT32_MAX))
    return Status::error(StatusCode::kBadFormat, "%s: GGUF key %s holds %llu tokens (at most %d)", p.name(), key::kTokens,
                         static_cast<unsigned long long>(m.tokens_count), kIntMax);
  if (m.seen[kKScores] && m.scores_count != m.tokens_count)
    return Status::error(StatusCode::kBadFormat, "%s: GGUF key %s holds %llu scores for %llu tokens", p.name(),
                         key::kScores, static_cast<unsigned long long>(m.scores_count),
                         static_cast<unsigned long long>(m.tokens_count));
  if (m.seen[kKTypes] && m.types_count != m.tokens_count)
    return Status::error(StatusCode::kBadFormat, "%s: GGUF key %s holds %llu token types for %llu tokens", p.name(),
                         key::kTokenTypes, static_cast<unsigned long long>(m.types_count),
                         static_cast<unsigned long long>(m.tokens_count));
  t.types_offset = m.seen[kKTypes] ? m.types_offset : 0;
  t.count = static_cast<int>(m.tokens_count);
  t.tokens_offset = m.tokens_offset;
  t.scores_offset = m.seen[kKScores] ? m.scores_offset : 0;
  // llama2.c's tokenizer.bin spells BOS and EOS "\n<s>\n" and "\n</s>\n"; the loader wraps
  // those two pieces the same way (text/gguf_tokenizer.cpp): 2 bytes each.
  t.piece_bytes = m.piece_bytes + 2 + (spec->config.bos_id != spec->config.eos_id ? 2 : 0);
  t.max_piece_bytes = static_cast<int>(m.max_piece + 2 < INT32_MAX ? m.max_piece + 2 : INT32_MAX);
  if (t.piece_bytes > UINT32_MAX)
    return Status::error(StatusCode::kBadFormat, "%s: GGUF key %s holds %llu bytes of pieces (at most 4 GiB)", p.name(),
                         key::kTokens, static_cast<unsigned long long>(t.piece_bytes));
  t.present = std::strcmp(m.tok_model, "llama") == 0;
  return Status();
}

// What the metadata pass hands to the tensor pass.
struct Layout {
  std::uint64_t tensor_count = 0;
  std::uint64_t infos_offset = 0;
  std::uint32_t alignment = kDefaultAlignment;
  long long vocab_key = -1;  // <architecture>.vocab_size, -1 when absent
  const Architecture* arch = nullptr;
};

POCKETLM_FRAME Status read_gguf_metadata(Storage& storage, unsigned char* buffer, ModelSpec* spec, Layout* layout) {
  Parser p(storage, 0, buffer);
  std::uint64_t kv_count = 0;
  POCKETLM_TRY(read_header(p, &layout->tensor_count, &kv_count));
  Meta m;
  POCKETLM_TRY(read_metadata(p, kv_count, &m));
  POCKETLM_TRY(read_config(p, m, &spec->config, &layout->vocab_key));
  layout->arch = m.arch;
  spec->architecture = m.arch->name;
  if (m.seen[kKAlign]) {
    const long long a = m.ints[kKAlign];
    if (a <= 0 || a > (1 << 20) || (a & (a - 1)) != 0)
      return Status::error(StatusCode::kBadFormat, "%s: GGUF key %s = %lld must be a power of two up to 1 MiB", p.name(),
                           key::kAlignment, a);
    layout->alignment = static_cast<std::uint32_t>(a);
  }
  layout->infos_offset = p.offset();
  return describe_tokenizer(p, m, spec);
}

// The vocabulary from token_embd, checked against every other place that states it.
POCKETLM_FRAME Status check_vocab(const Storage& s, const RoleSeen* seen, const Layout& layout, ModelSpec* spec) {
  ModelConfig& c = spec->config;
  const RoleSeen& emb = seen[static_cast<int>(TensorRole::kTokenEmbedding)];
  if (emb.rows > static_cast<std::uint64_t>(INT32_MAX))
    return Status::error(StatusCode::kBadFormat, "%s: GGUF tensor token_embd.weight has %llu rows (at most %d)", s.name(),
                         static_cast<unsigned long long>(emb.rows), kIntMax);
  c.vocab_size = static_cast<int>(emb.rows);
  const RoleSeen& out = seen[static_cast<int>(TensorRole::kWcls)];
  if (out.count > 0 && out.rows != emb.rows)
    return Status::error(StatusCode::kBadFormat, "%s: GGUF tensor output.weight has %llu rows but token_embd.weight %llu",
                         s.name(), static_cast<unsigned long long>(out.rows), static_cast<unsigned long long>(emb.rows));
  if (layout.vocab_key >= 0 && layout.vocab_key != c.vocab_size)
    return Status::error(StatusCode::kBadFormat, "%s: GGUF key %s.vocab_size = %lld but token_embd.weight has %d rows",
                         s.name(), layout.arch->name, layout.vocab_key, c.vocab_size);
  const EmbeddedTokenizer& t = spec->tokenizer;
  if (t.tokens_offset != 0 && t.count != c.vocab_size)
    return Status::error(StatusCode::kBadFormat, "%s: GGUF key %s holds %d tokens but token_embd.weight has %d rows",
                         s.name(), key::kTokens, t.count, c.vocab_size);
  if (c.bos_id >= c.vocab_size)
    return Status::error(StatusCode::kBadFormat, "%s: GGUF key %s = %d is outside the vocabulary [0, %d)", s.name(),
                         key::kBosId, c.bos_id, c.vocab_size);
  if (c.eos_id >= c.vocab_size)
    return Status::error(StatusCode::kBadFormat, "%s: GGUF key %s = %d is outside the vocabulary [0, %d)", s.name(),
                         key::kEosId, c.eos_id, c.vocab_size);
  return Status();
}

// Layer spacing from layers 0 and 1 of every per-layer role.
POCKETLM_FRAME Status layer_strides(const Storage& s, const ModelConfig& c, const Architecture& arch, RoleSeen* seen) {
  for (int r = 0; r < kTensorRoleCount; ++r) {
    RoleSeen& e = seen[r];
    const auto role = static_cast<TensorRole>(r);
    if (e.count == 0 || !is_per_layer(role) || c.n_layers < 2) continue;
    char a[kNameCap], b[kNameCap];
    gguf_tensor_name(role_info(arch, role), 0, a, sizeof a);
    gguf_tensor_name(role_info(arch, role), 1, b, sizeof b);
    if (e.off[0] == UINT64_MAX || e.off[1] == UINT64_MAX)
      return Status::error(StatusCode::kBadFormat, "%s: GGUF tensor %s is missing", s.name(),
                           e.off[0] == UINT64_MAX ? a : b);
    if (e.off[1] <= e.off[0])
      return Status::error(StatusCode::kUnsupported,
                           "%s: GGUF tensor %s (data offset %llu) is not after %s (%llu): pocketlm needs the layers of "
                           "one kind of tensor in order, evenly spaced",
                           s.name(), b, static_cast<unsigned long long>(e.off[1]), a,
                           static_cast<unsigned long long>(e.off[0]));
    e.stride = e.off[1] - e.off[0];
  }
  return Status();
}

// The spec's roles in the order of their first tensor in the file, so loading reads forward.
POCKETLM_FRAME Status add_roles(const Storage& s, const RoleSeen* seen, std::uint64_t data_start, ModelSpec* spec) {
  bool added[kTensorRoleCount] = {};
  for (;;) {
    int best = -1;
    for (int r = 0; r < kTensorRoleCount; ++r)
      if (seen[r].count > 0 && !added[r] && (best < 0 || seen[r].off[0] < seen[best].off[0])) best = r;
    if (best < 0) return Status();
    added[best] = true;
    const RoleSeen& e = seen[best];
    const auto role = static_cast<TensorRole>(best);
    TensorType type = TensorType::kF32;
    type_from_ggml(e.ggml_type, &type);
    std::uint64_t begin = 0, end = 0;
    if (!checked_add(data_start, e.off[0], &begin) ||
        !spec->add_role_strided(role, type, 0, e.rows, e.cols, begin, e.stride, &end) || end > s.size()) {
      char name[kNameCap];
      gguf_tensor_name(spec->role(role), is_per_layer(role) ? spec->config.n_layers - 1 : -1, name, sizeof name);
      return Status::error(StatusCode::kBadFormat,
                           "%s: GGUF tensor %s (%s [%llu, %llu]) runs past the end of the file (%llu bytes)", s.name(),
                           name, ggml_type_name(e.ggml_type), static_cast<unsigned long long>(e.rows),
                           static_cast<unsigned long long>(e.cols), static_cast<unsigned long long>(s.size()));
    }
  }
}

POCKETLM_FRAME Status read_gguf_tensors(Storage& storage, unsigned char* buffer, const Layout& layout, ModelSpec* spec) {
  const ModelConfig& c = spec->config;
  RoleSeen seen[kTensorRoleCount];
  std::uint64_t data_start = 0;
  {
    Parser p(storage, layout.infos_offset, buffer);
    POCKETLM_TRY(scan_tensors(p, layout.tensor_count, c, *layout.arch, layout.alignment, seen));
    if (!checked_align_up(p.offset(), layout.alignment, &data_start) || data_start > storage.size())
      return Status::error(StatusCode::kBadFormat,
                           "%s: GGUF data section would start at offset %llu, past the end of the file (%llu bytes)",
                           storage.name(), static_cast<unsigned long long>(data_start),
                           static_cast<unsigned long long>(storage.size()));
  }
  for (int r = 0; r < kTensorRoleCount; ++r) {
    const auto role = static_cast<TensorRole>(r);
    if (!(layout.arch->required & role_bit(role)) || seen[r].count > 0) continue;
    char name[kNameCap];
    gguf_tensor_name(role_info(*layout.arch, role), is_per_layer(role) ? 0 : -1, name, sizeof name);
    return Status::error(StatusCode::kBadFormat, "%s: GGUF tensor %s is missing", storage.name(), name);
  }
  POCKETLM_TRY(check_vocab(storage, seen, layout, spec));
  POCKETLM_TRY(layer_strides(storage, c, *layout.arch, seen));
  {
    Parser again(storage, layout.infos_offset, buffer);
    POCKETLM_TRY(check_layers(again, layout.tensor_count, c, *layout.arch, layout.alignment, seen));
  }
  spec->format = ModelFormat::kGguf;
  spec->header_bytes = data_start;
  spec->shared_classifier = seen[static_cast<int>(TensorRole::kWcls)].count == 0;
  POCKETLM_TRY(add_roles(storage, seen, data_start, spec));
  return check_overlaps(storage, *spec);
}

}  // namespace

Status read_gguf_spec(Storage& storage, ModelSpec* spec) {
  spec->reset();
  spec->file_bytes = storage.size();
  if (storage.size() < 24)
    return Status::error(StatusCode::kBadFormat, "%s: file is %llu bytes, too short for a GGUF header (24 bytes)",
                         storage.name(), static_cast<unsigned long long>(storage.size()));
  unsigned char buffer[kParserBufferBytes];
  Layout layout;
  Status st = read_gguf_metadata(storage, buffer, spec, &layout);
  if (st.ok()) st = read_gguf_tensors(storage, buffer, layout, spec);
  if (!st.ok()) {
    const std::uint64_t size = spec->file_bytes;
    spec->reset();  // no half-read spec
    spec->file_bytes = size;
  }
  return st;
}

}  // namespace pocketlm
