// `pocketlm convert IN --to gguf --type f32|f16|q8_0|q4_0|iq4_xs [-z tokenizer.bin] -o OUT`: any model
// pocketlm reads (llama2.c v0/v1/v2, GGUF) to a GGUF v3 `llama` file in llama.cpp's names and
// keys, written front to back by the engine's GgufWriter: metadata, the tokenizer (from -z, or
// copied from a GGUF input), then every tensor streamed a few rows at a time (dequantized to
// f32, converted to the target type). wq and wk are copied in their row order: llama2.c and
// GGUF llama files share the RoPE pairing (format/gguf.h).
//
// Types: norms stay F32 (as llama.cpp keeps them); every matrix takes --type, except that a
// matrix whose rows are not whole blocks of 32 (stories260K's w2: 172 columns) cannot be
// Q8_0/Q4_0 and is written F16 instead, and an IQ4_XS matrix whose rows are not whole
// super-blocks of 256 (a dim-96 model's) is written Q4_0 (or F16), which the summary line names.
#include "gguf_convert.h"

#include <cstring>
#include <string>
#include <vector>

#include "cli_common.h"
#include "output_file.h"
#include "progress_bar.h"
#include "tensor_rows.h"
#include "pocketlm/format/architecture.h"
#include "pocketlm/format/gguf.h"
#include "pocketlm/format/gguf_writer.h"
#include "pocketlm/format/model_reader.h"
#include "pocketlm/io/chunk_reader.h"
#include "pocketlm/quant/fp16.h"
#include "pocketlm/quant/iq4_xs.h"
#include "pocketlm/quant/q4_0.h"
#include "pocketlm/quant/q8_0.h"
#include "pocketlm/text/tokenizer.h"
#include "ports/posix/file_storage.h"

namespace pocketlm::cli {

namespace {

using namespace gguf;
using K = TensorRole;

// llama2.c's tokenizer.bin (tokenizer.py's spelling) to GGUF's: spaces back to U+2581, the BOS
// and EOS pieces without tokenizer.py's surrounding newlines, and token types by the rules
// SentencePiece gives them (id 0 "<unk>" unknown, BOS/EOS control, "<0xHH>" byte).
Status read_tokenizer_bin(const std::string& path, int vocab, int bos, int eos, Vocab* v) {
  FileStorage f;
  POCKETLM_TRY(f.open(path.c_str(), "tokenizer"));
  std::vector<unsigned char> chunk(64 * 1024);
  ChunkReader r(f, 0, chunk.data(), chunk.size());
  std::int32_t max_len = 0;
  POCKETLM_TRY(r.take(&max_len, 4));
  if (max_len <= 0)
    return Status::error(StatusCode::kBadFormat, "%s: tokenizer field max_token_length = %d must be positive", f.name(),
                         max_len);
  for (int i = 0; i < vocab; ++i) {
    float score = 0;
    std::int32_t len = 0;
    Status st = r.take(&score, 4);
    if (st.ok()) st = r.take(&len, 4);
    if (!st.ok())
      return Status::error(StatusCode::kBadFormat, "%s: tokenizer has fewer records than the model's vocab_size = %d",
                           f.name(), vocab);
    if (len < 0 || len > max_len)
      return Status::error(StatusCode::kBadFormat, "%s: tokenizer record %d has piece length %d outside [0, %d]",
                           f.name(), i, len, max_len);
    std::string piece(static_cast<std::size_t>(len), '\0');
    POCKETLM_TRY(r.take(piece.data(), piece.size()));
    if ((i == bos || i == eos) && piece.size() >= 2 && piece.front() == '\n' && piece.back() == '\n')
      piece = piece.substr(1, piece.size() - 2);
    std::string spelled;
    for (char c : piece) {
      if (c == ' ')
        spelled.append(reinterpret_cast<const char*>(kSpaceMark), 3);
      else
        spelled.push_back(c);
    }
    std::int32_t type = kTokenNormal;
    if (i == bos || i == eos)
      type = kTokenControl;
    else if (i == 0 && spelled == "<unk>")
      type = kTokenUnknown;
    else if (spelled.size() == 6 && spelled.compare(0, 3, "<0x") == 0 && spelled[5] == '>')
      type = kTokenByte;
    v->pieces.push_back(std::move(spelled));
    v->scores.push_back(score);
    v->types.push_back(type);
  }
  if (r.offset() != f.size())
    return Status::error(StatusCode::kBadFormat,
                         "%s: tokenizer has %llu bytes after record %d: it holds more pieces than the model's "
                         "vocab_size = %d",
                         f.name(), static_cast<unsigned long long>(f.size() - r.offset()), vocab - 1, vocab);
  return Tokenizer::check_scores(f.name(), "tokenizer.bin score", v->scores.data(), vocab);
}

// A GGUF input's own vocabulary, copied as it is spelled there.
Status read_embedded(FileStorage& in, const EmbeddedTokenizer& t, Vocab* v) {
  std::vector<unsigned char> chunk(64 * 1024);
  ChunkReader r(in, t.tokens_offset, chunk.data(), chunk.size());
  for (int i = 0; i < t.count; ++i) {
    std::uint64_t len = 0;
    POCKETLM_TRY(r.take(&len, 8));
    std::string piece(static_cast<std::size_t>(len), '\0');  // the reader checked len against the file
    POCKETLM_TRY(r.take(piece.data(), piece.size()));
    v->pieces.push_back(std::move(piece));
  }
  v->scores.assign(static_cast<std::size_t>(t.count), 0.0f);
  if (t.scores_offset) POCKETLM_TRY(in.read(t.scores_offset, v->scores.data(), v->scores.size() * 4));
  POCKETLM_TRY(Tokenizer::check_scores(in.name(), key::kScores, v->scores.data(), t.count));
  v->types.assign(static_cast<std::size_t>(t.count), kTokenNormal);
  if (t.types_offset) POCKETLM_TRY(in.read(t.types_offset, v->types.data(), v->types.size() * 4));
  return Status();
}

// The ggml id of a --type name (f32 for "f32" and for any name the flags did not allow).
std::uint32_t ggml_of(const std::string& type) {
  TensorType t = TensorType::kF32;
  if (!type_from_name(type.c_str(), &t) || type_traits(t).ggml_type < 0) t = TensorType::kF32;
  return static_cast<std::uint32_t>(type_traits(t).ggml_type);
}

// general.file_type of a file whose main type has this ggml id.
std::uint32_t file_type_of(std::uint32_t ggml) {
  TensorType t = TensorType::kF32;
  if (!type_from_ggml(ggml, &t)) t = TensorType::kF32;
  return static_cast<std::uint32_t>(type_traits(t).gguf_file_type);
}

// Streams one tensor: rows read and dequantized to f32 (TensorRows), converted, written.
class TensorCopier {
 public:
  TensorCopier(FileStorage& in, const ModelSpec& spec, GgufWriter& w, ProgressBar& bar)
      : rows_(in, spec), w_(w), bar_(bar) {}

  Status copy(const OutTensor& t) {
    const TensorInfo& s = t.source;
    const std::size_t rows_per = TensorRows::rows_per_read(s);
    POCKETLM_TRY(w_.begin_tensor(t.bytes));
    for (std::uint64_t r = 0; r < s.rows;) {
      const std::size_t n_rows = static_cast<std::size_t>(s.rows - r < rows_per ? s.rows - r : rows_per);
      const float* f32 = nullptr;
      std::uint64_t bytes = 0;
      POCKETLM_TRY(rows_.read(s, r, n_rows, &f32, &bytes));
      POCKETLM_TRY(write_as(t.type, f32, n_rows * static_cast<std::size_t>(s.cols)));
      bar_.advance(bytes);
      r += n_rows;
    }
    return Status();
  }

 private:
  // The tensor's bytes in its ggml type, through the type table's weight quantizer.
  Status write_as(std::uint32_t ggml, const float* f32, std::size_t n) {
    TensorType type = TensorType::kF32;
    std::uint64_t bytes = 0, scales = 0;
    if (!type_from_ggml(ggml, &type) || !type_traits(type).quantize_weights ||
        !type_bytes(type, n, 0, &bytes, &scales))
      return Status::error(StatusCode::kUnsupported, "convert: no GGUF writer for ggml type %u", static_cast<unsigned>(ggml));
    if (type == TensorType::kF32) return w_.tensor_data(f32, static_cast<std::size_t>(bytes));  // no copy
    out_.resize(static_cast<std::size_t>(bytes));
    type_traits(type).quantize_weights(f32, n, out_.data());
    return w_.tensor_data(out_.data(), out_.size());
  }

  TensorRows rows_;
  GgufWriter& w_;
  ProgressBar& bar_;
  std::vector<unsigned char> out_;
};

bool is_gguf_type(const std::string& type) {
  return type == "f32" || type == "f16" || type == "q8_0" || type == "q4_0" || type == "iq4_xs";
}

// --tensor-type ROLE=TYPE values into types[] (by role), each named in *summary (", ple_table
// q4_0"). Errors: not ROLE=TYPE, a role that is not a matrix of this file, a type not written.
Status parse_tensor_types(const std::vector<std::string>& values, const ModelSpec& spec, std::uint32_t* types,
                          std::string* summary) {
  for (const std::string& v : values) {
    const std::size_t eq = v.find('=');
    const std::string role = v.substr(0, eq), type = eq == std::string::npos ? "" : v.substr(eq + 1);
    int found = -1;
    for (int r = 0; r < kTensorRoleCount; ++r)
      if (role == spec.role(static_cast<K>(r)).name && spec.has(static_cast<K>(r)) &&
          spec.role(static_cast<K>(r)).use != TensorUse::kNorm && spec.role(static_cast<K>(r)).gguf_name)
        found = r;
    if (eq == std::string::npos || !is_gguf_type(type))
      return Status::error(StatusCode::kInvalidArgument,
                           "--tensor-type: '%s' is not ROLE=TYPE with TYPE f32, f16, q8_0, q4_0 or iq4_xs", v.c_str());
    if (found < 0)
      return Status::error(StatusCode::kInvalidArgument,
                           "--tensor-type: '%s' names no matrix of this %s model (roles as pocketlm inspect lists them)",
                           v.c_str(), spec.architecture);
    types[found] = ggml_of(type);
    *summary += ", " + role + " " + type;
  }
  return Status();
}

std::string base_name(const std::string& path) {
  std::string b = path.substr(path.find_last_of('/') == std::string::npos ? 0 : path.find_last_of('/') + 1);
  const std::size_t dot = b.find_last_of('.');
  return dot == std::string::npos || dot == 0 ? b : b.substr(0, dot);
}

}  // namespace

std::vector<OutTensor> plan_tensors(const ModelSpec& spec, const std::uint32_t* types, std::vector<Fallback>* fallbacks) {
  std::vector<OutTensor> out;
  auto add = [&](K role, int layer) {
    OutTensor t;
    t.source = spec.tensor(role, layer);
    char name[64];
    gguf_tensor_name(*t.source.schema, layer, name, sizeof name);
    t.name = name;
    t.type = kGgmlF32;
    if (t.source.rows > 1) {
      t.type = types[static_cast<int>(role)];
      const std::uint32_t wanted = t.type;
      if (t.type == kGgmlIQ4_XS && t.source.cols % kIQ4_XSBlock != 0) t.type = kGgmlQ4_0;
      if ((t.type == kGgmlQ8_0 || t.type == kGgmlQ4_0) && t.source.cols % 32 != 0) t.type = kGgmlF16;
      if (t.type != wanted && layer <= 0)
        fallbacks->push_back({layer < 0 ? t.name : std::string("blk.N") + (t.source.schema->gguf_name + 6), t.type});
    }
    out.push_back(t);
  };
  const auto written = [&spec](K role) { return spec.has(role) && spec.role(role).gguf_name != nullptr; };
  // Role by role in the order of their ids (the shared ones, then the kind's), as llama.cpp
  // groups them: the globals a token reads first, the layers, the other globals.
  const Architecture* arch = spec.schema();
  const auto first = [arch](K role) { return arch && read_before_layers(*arch, role); };
  for (int r = 0; r < kTensorRoleCount; ++r)
    if (first(K(r)) && written(K(r))) add(K(r), -1);
  for (int l = 0; l < spec.config.n_layers; ++l)
    for (int r = 0; r < kTensorRoleCount; ++r)
      if (is_per_layer(K(r)) && written(K(r))) add(K(r), l);
  for (int r = 0; r < kTensorRoleCount; ++r)
    if (!is_per_layer(K(r)) && !first(K(r)) && written(K(r))) add(K(r), -1);
  return out;
}

Status write_gguf_metadata(GgufWriter& w, const ModelSpec& spec, const std::string& name, std::uint32_t matrix_type,
                           const Vocab* vocab, std::vector<OutTensor>& tensors) {
  const ModelConfig& c = spec.config;
  const char* tok_model = spec.tokenizer.model[0] ? spec.tokenizer.model : "llama";
  // The hyperparameters as the spec's architecture row names them, under its prefix (a value
  // of 0 is one the file did not give: an optional key of the kind).
  const Architecture* arch = find_architecture(spec.architecture);
  if (!arch)
    return Status::error(StatusCode::kUnsupported, "%s: architecture '%s' is not one pocketlm writes", name.c_str(),
                         spec.architecture);
  std::vector<std::pair<std::string, std::uint32_t>> hyper;
  for (int i = 0; i < arch->key_count; ++i) {
    const int v = config_value(c, arch->keys[i].field);
    if (v > 0) hyper.emplace_back(std::string(arch->name) + "." + arch->keys[i].suffix, static_cast<std::uint32_t>(v));
  }
  hyper.emplace_back(std::string(arch->name) + ".rope.dimension_count", static_cast<std::uint32_t>(c.head_size()));
  const std::string eps_key = std::string(arch->name) + ".attention.layer_norm_rms_epsilon";
  const std::string theta_key = std::string(arch->name) + ".rope.freq_base";
  const std::uint64_t kv_count = 5 + hyper.size() + 2 + (vocab ? 7 : 0);
  POCKETLM_TRY(w.begin(tensors.size(), kv_count));
  POCKETLM_TRY(w.kv_string(key::kArchitecture, arch->name));
  POCKETLM_TRY(w.kv_string(key::kName, name.c_str()));
  POCKETLM_TRY(w.kv_u32(key::kAlignment, kDefaultAlignment));
  POCKETLM_TRY(w.kv_u32(key::kFileType, file_type_of(matrix_type)));
  POCKETLM_TRY(w.kv_u32(key::kQuantizationVersion, 2));
  for (const auto& [k, v] : hyper) POCKETLM_TRY(w.kv_u32(k.c_str(), v));
  POCKETLM_TRY(w.kv_f32(eps_key.c_str(), c.rms_eps));
  POCKETLM_TRY(w.kv_f32(theta_key.c_str(), c.rope_theta));
  if (vocab) {
    POCKETLM_TRY(w.kv_string(key::kTokenizerModel, tok_model));
    POCKETLM_TRY(w.kv_array(key::kTokens, kString, vocab->pieces.size()));
    for (const std::string& p : vocab->pieces) POCKETLM_TRY(w.array_string(p.data(), p.size()));
    POCKETLM_TRY(w.kv_array(key::kScores, kFloat32, vocab->scores.size()));
    POCKETLM_TRY(w.array_f32(vocab->scores.data(), vocab->scores.size()));
    POCKETLM_TRY(w.kv_array(key::kTokenTypes, kInt32, vocab->types.size()));
    POCKETLM_TRY(w.array_i32(vocab->types.data(), vocab->types.size()));
    POCKETLM_TRY(w.kv_u32(key::kBosId, static_cast<std::uint32_t>(c.bos_id)));
    POCKETLM_TRY(w.kv_u32(key::kEosId, static_cast<std::uint32_t>(c.eos_id)));
    POCKETLM_TRY(w.kv_bool(key::kAddBos, true));
  }
  for (OutTensor& t : tensors)
    POCKETLM_TRY(w.tensor_info(t.name.c_str(), t.source.rows, t.source.cols, t.type, &t.bytes));
  return Status();
}

Status convert_to_gguf(const GgufConvertOptions& o, std::string* summary) {
  if (!is_gguf_type(o.type))
    return Status::error(StatusCode::kInvalidArgument, "--type: '%s' is not a GGUF type pocketlm writes (f32, f16, q8_0, q4_0, iq4_xs)",
                         o.type.c_str());
  FileStorage in;
  POCKETLM_TRY(in.open(o.input.c_str(), "model"));
  ModelSpec spec;
  POCKETLM_TRY(read_model_spec(in, &spec));
  POCKETLM_TRY(check_tensors_addressable(in.name(), spec, SIZE_MAX));
  const ModelConfig& c = spec.config;

  Vocab vocab;
  if (!o.tokenizer.empty())
    POCKETLM_TRY(read_tokenizer_bin(o.tokenizer, c.vocab_size, c.bos_id, c.eos_id, &vocab));
  else if (spec.tokenizer.tokens_offset)
    POCKETLM_TRY(read_embedded(in, spec.tokenizer, &vocab));

  std::vector<Fallback> fallbacks;
  const std::uint32_t matrix_type = ggml_of(o.type);
  std::uint32_t types[kTensorRoleCount];
  for (std::uint32_t& t : types) t = matrix_type;
  std::string overrides;
  POCKETLM_TRY(parse_tensor_types(o.tensor_types, spec, types, &overrides));
  std::vector<OutTensor> tensors = plan_tensors(spec, types, &fallbacks);

  OutputFile out;
  POCKETLM_TRY(out.open(o.output, "-o"));
  FileSink sink(out);
  GgufWriter w(sink);
  const std::string name = base_name(o.input);
  POCKETLM_TRY(write_gguf_metadata(w, spec, name, matrix_type, vocab.present() ? &vocab : nullptr, tensors));
  std::uint64_t total = 0;
  for (const OutTensor& t : tensors) total += t.source.bytes();
  {
    ProgressBar bar("convert", total);
    TensorCopier copier(in, spec, w, bar);
    for (const OutTensor& t : tensors) POCKETLM_TRY(copier.copy(t));
  }
  POCKETLM_TRY(w.finish());
  POCKETLM_TRY(out.commit());
  *summary = "GGUF v3, matrices " + o.type + overrides +
             (vocab.present() ? ", tokenizer embedded" : ", no tokenizer (give -z to run it)");
  // "; F16 for a, b (columns not a multiple of 32)", then the same for IQ4_XS's Q4_0 fallbacks.
  for (const std::uint32_t type : {kGgmlF16, kGgmlQ4_0}) {
    std::string names;
    for (const Fallback& f : fallbacks)
      if (f.type == type) names += (names.empty() ? "" : ", ") + f.name;
    if (!names.empty())
      *summary += std::string("; ") + (type == kGgmlF16 ? "F16 for " : "Q4_0 for ") + names +
                  (type == kGgmlF16 ? " (columns not a multiple of 32)" : " (columns not a multiple of 256)");
  }
  return Status();
}

}  // namespace pocketlm::cli
