// `pocketlm convert IN --to gguf --type T`: see gguf_convert.cpp.
// `pocketlm convert IN --to q80`: an fp32 llama2.c checkpoint (v0 or v1) to v2 q80, byte for
// byte what llama2.c's export.py writes (shared/spec/synthetic-models.md, llama2c-compat.md),
// except that the group size also divides hidden_dim and all-zero groups get scale 0. A GGUF
// input (any type pocketlm reads) is dequantized to f32 first, tensor by tensor.
// Streams: a few rows of one tensor are in memory at a time, plus that tensor's scales, which
// the format stores after all of its int8 values.
#include <CLI/CLI.hpp>
#include <bit>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "cli_common.h"
#include "commands.h"
#include "gguf_convert.h"
#include "output_file.h"
#include "progress_bar.h"
#include "tensor_rows.h"
#include "pocketlm/format/architecture.h"
#include "pocketlm/format/llama2c_reader.h"
#include "pocketlm/format/model_reader.h"
#include "ports/posix/file_storage.h"
#include "pocketlm/quant/q80.h"

namespace pocketlm::cli {

static_assert(std::endian::native == std::endian::little, "checkpoints are little-endian");

void add_convert_command(CLI::App& app, ConvertOptions& o) {
  CLI::App* cmd = app.add_subcommand(
      "convert", "convert a model: llama2.c fp32 (v0/v1) or GGUF to v2 q80, or any model pocketlm reads to GGUF v3");
  cmd->add_option("input", o.input, "model: llama2.c .bin (v0/v1; for gguf also v2) or GGUF")->required()->type_name("FILE");
  cmd->add_option("--to", o.to, "target format")->required()->type_name("q80|gguf");
  cmd->add_option("--type", o.type, "gguf: type of every matrix (default f32; norms stay f32)")
      ->type_name("f32|f16|q8_0|q4_0|iq4_xs");
  cmd->add_option("--tensor-type", o.tensor_types,
                  "gguf: another type for one role's matrices, e.g. ple_table=q4_0 (roles as inspect lists them; "
                  "repeatable)")
      ->type_name("ROLE=TYPE");
  cmd->add_option("-z", o.tokenizer, "gguf: tokenizer.bin to embed (default: the input's own, if it is GGUF)")
      ->type_name("FILE");
  cmd->add_option("--group-size", o.group_size,
                  "q80 group size; must divide dim and hidden_dim (default: 64, halved until it does)")
      ->type_name("INT");
  cmd->add_option("-o", o.output, "output file (written as FILE.tmp-XXXXXX, renamed when complete)")
      ->required()
      ->type_name("FILE");
}

namespace {

using K = TensorRole;

// The group size: --group-size if given, else export.py's rule extended to hidden_dim.
Status choose_group_size(const ConvertOptions& o, const ModelConfig& c, std::int32_t* gs) {
  if (o.group_size.empty()) {
    std::int32_t g = 64;
    while (g > 1 && (c.dim % g != 0 || c.hidden_dim % g != 0)) g /= 2;
    *gs = g;
    return Status();
  }
  long long g = 0;
  POCKETLM_TRY(parse_int("--group-size", o.group_size, 1, INT32_MAX, &g));
  if (c.dim % g != 0 || c.hidden_dim % g != 0)
    return Status::error(StatusCode::kInvalidArgument, "--group-size: %lld does not divide both dim = %d and hidden_dim = %d",
                         g, c.dim, c.hidden_dim);
  *gs = static_cast<std::int32_t>(g);
  return Status();
}

// A v2 header has no eps, RoPE base or special ids: run.c's constants are implied, so a GGUF
// input with others cannot be written without changing the model.
Status check_runc_constants(const char* name, const ModelConfig& c) {
  const ModelConfig runc;
  if (c.rms_eps != runc.rms_eps || c.rope_theta != runc.rope_theta)
    return Status::error(StatusCode::kInvalidArgument,
                         "%s: rms_eps = %f and rope_theta = %f cannot be kept in llama2.c v2, which implies run.c's "
                         "1e-5 and 10000 (convert --to gguf keeps them)",
                         name, static_cast<double>(c.rms_eps), static_cast<double>(c.rope_theta));
  if (c.bos_id != runc.bos_id || c.eos_id != runc.eos_id)
    return Status::error(StatusCode::kInvalidArgument,
                         "%s: bos_id = %d and eos_id = %d cannot be kept in llama2.c v2, which implies run.c's 1 and 2 "
                         "(convert --to gguf keeps them)",
                         name, c.bos_id, c.eos_id);
  return Status();
}

Status write_header(const ModelSpec& spec, std::int32_t gs, OutputFile& out) {
  unsigned char h[kLlama2cHeaderBytes] = {};
  const ModelConfig& c = spec.config;
  const std::uint32_t magic = kLlama2cMagic;
  const std::int32_t fields[8] = {2, c.dim, c.hidden_dim, c.n_layers, c.n_heads, c.n_kv_heads, c.vocab_size, c.seq_len};
  std::memcpy(h, &magic, 4);
  std::memcpy(h + 4, fields, 8 * 4);  // version, then the config (vocab_size positive)
  h[36] = spec.shared_classifier ? 1 : 0;
  std::memcpy(h + 37, &gs, 4);  // unaligned, as export.py packs it
  return out.write(h, sizeof h);
}

// Tensors read as f32 whatever the input stores (TensorRows dequantizes f16, q8_0, q4_0 and
// q80 by their type), a few whole rows at a time; gs_ divides every row (dim, hidden_dim).
class Converter {
 public:
  Converter(FileStorage& in, const ModelSpec& spec, OutputFile& out, std::int32_t gs, ProgressBar& bar)
      : rows_(in, spec), in_(in), out_(out), gs_(static_cast<std::uint64_t>(gs)), bar_(bar) {}

  // An fp32 vector, copied as is.
  Status copy(const TensorInfo& t) {
    return for_rows(t, [&](const float* values, std::size_t n, std::uint64_t) {
      return out_.write(values, n * sizeof(float));
    });
  }

  // A matrix: its int8 values chunk by chunk, then all of its scales.
  Status quantize(const TensorInfo& t) {
    // The tensor's scales are held whole. On a 32-bit host their count is checked before it
    // becomes a size_t: a count beyond what a vector can hold would wrap (or throw).
    const std::uint64_t n_scales = t.numel() / gs_;
    if (n_scales > scales_.max_size())
      return Status::error(StatusCode::kOutOfMemory, "%s: tensor %s needs %llu scales, more than this machine can hold",
                           in_.name(), t.schema->name, static_cast<unsigned long long>(n_scales));
    scales_.resize(static_cast<std::size_t>(n_scales));
    POCKETLM_TRY(for_rows(t, [&](const float* values, std::size_t n, std::uint64_t done) {
      q_.resize(n);
      quantize_q80_weights(values, n, static_cast<int>(gs_), q_.data(), scales_.data() + done / gs_);
      return out_.write(q_.data(), n);
    }));
    return out_.write(scales_.data(), scales_.size() * sizeof(float));
  }

 private:
  // Calls f(values, count, first element index) for each read of whole rows of t.
  template <typename F>
  Status for_rows(const TensorInfo& t, F f) {
    const std::size_t rows_per = TensorRows::rows_per_read(t);
    for (std::uint64_t r = 0; r < t.rows;) {
      const std::size_t n_rows = static_cast<std::size_t>(t.rows - r < rows_per ? t.rows - r : rows_per);
      const float* values = nullptr;
      std::uint64_t bytes = 0;
      POCKETLM_TRY(rows_.read(t, r, n_rows, &values, &bytes));
      POCKETLM_TRY(f(values, n_rows * static_cast<std::size_t>(t.cols), r * t.cols));
      bar_.advance(bytes);
      r += n_rows;
    }
    return Status();
  }

  TensorRows rows_;
  FileStorage& in_;
  OutputFile& out_;
  std::uint64_t gs_;
  ProgressBar& bar_;
  std::vector<std::int8_t> q_;
  std::vector<float> scales_;
};

Status convert(const ConvertOptions& o, std::int32_t* gs_used) {
  if (o.to != "q80")
    return Status::error(StatusCode::kInvalidArgument, "--to: '%s' is not a supported target (expected q80 or gguf)",
                         o.to.c_str());
  if (!o.type.empty() || !o.tokenizer.empty() || !o.tensor_types.empty())
    return Status::error(StatusCode::kInvalidArgument, "%s: only --to gguf takes it",
                         !o.type.empty() ? "--type" : !o.tokenizer.empty() ? "-z" : "--tensor-type");
  FileStorage in;
  POCKETLM_TRY(in.open(o.input.c_str(), "model"));
  ModelSpec spec;
  POCKETLM_TRY(read_model_spec(in, &spec));
  // llama2.c files hold llama's tensors only: another kind's would be lost.
  if (std::strcmp(spec.architecture, llama_architecture().name) != 0)
    return Status::error(StatusCode::kInvalidArgument,
                         "%s: architecture '%s' has tensors a llama2.c file cannot hold (use --to gguf)", in.name(),
                         spec.architecture);
  POCKETLM_TRY(check_tensors_addressable(in.name(), spec, SIZE_MAX));  // 32-bit hosts: 4 GiB tensors
  if (spec.format == ModelFormat::kLlama2cV2)
    return Status::error(StatusCode::kInvalidArgument, "%s: format is %s, not fp32 (convert reads v0, v1 or GGUF)",
                         in.name(), format_name(spec.format));
  POCKETLM_TRY(check_runc_constants(in.name(), spec.config));
  std::int32_t gs = 0;
  POCKETLM_TRY(choose_group_size(o, spec.config, &gs));

  OutputFile out;
  POCKETLM_TRY(out.open(o.output, "-o"));
  POCKETLM_TRY(write_header(spec, gs, out));
  // v2 order: the fp32 norms, then the matrices to quantize (a v0 file's freq_cis is dropped).
  std::vector<TensorInfo> norms, matrices;
  const int layers = spec.config.n_layers;
  for (K kind : {K::kRmsAtt, K::kRmsFfn})
    for (int l = 0; l < layers; ++l) norms.push_back(spec.tensor(kind, l));
  norms.push_back(spec.tensor(K::kRmsFinal, -1));
  matrices.push_back(spec.tensor(K::kTokenEmbedding, -1));
  for (K kind : {K::kWq, K::kWk, K::kWv, K::kWo, K::kW1, K::kW2, K::kW3})
    for (int l = 0; l < layers; ++l) matrices.push_back(spec.tensor(kind, l));
  if (!spec.shared_classifier) matrices.push_back(spec.tensor(K::kWcls, -1));
  std::uint64_t total = 0;
  for (const auto* list : {&norms, &matrices})
    for (const TensorInfo& t : *list) total += t.bytes();

  ProgressBar bar("convert", total);
  Converter conv(in, spec, out, gs, bar);
  for (const TensorInfo& t : norms) POCKETLM_TRY(conv.copy(t));
  for (const TensorInfo& t : matrices) POCKETLM_TRY(conv.quantize(t));
  POCKETLM_TRY(out.commit());
  *gs_used = gs;
  return Status();
}

}  // namespace

int run_convert(const ConvertOptions& o) {
  // Before any work: the output is renamed over its target, which must not be an input.
  const Status checked = check_output(o.output, "-o", {{"model", o.input}, {"-z", o.tokenizer}});
  if (!checked.ok()) return fail(checked);
  if (o.to == "gguf") {
    if (!o.group_size.empty()) return fail("--group-size: only --to q80 takes it (GGUF blocks are 32 values)");
    std::string summary;
    const Status st =
        convert_to_gguf({o.input, o.type.empty() ? "f32" : o.type, o.tokenizer, o.output, o.tensor_types}, &summary);
    if (!st.ok()) return fail(st);
    std::printf("wrote %s: %s\n", o.output.c_str(), summary.c_str());
    return kExitOk;
  }
  std::int32_t gs = 0;
  const Status st = convert(o, &gs);
  if (!st.ok()) return fail(st);
  std::printf("wrote %s: %s, group size %d\n", o.output.c_str(), format_name(ModelFormat::kLlama2cV2), gs);
  return kExitOk;
}

}  // namespace pocketlm::cli
