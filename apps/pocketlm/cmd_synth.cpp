// `pocketlm synth`: a deterministic checkpoint with random weights, so that memory budgets,
// streaming and speed can be measured at real model shapes without downloading or training
// real weights. The stories shapes are llama2.c v0 files whose bytes are fixed by
// shared/spec/synthetic-models.md; esp32-ple is the ESP32 write-up's per-layer-embedding shape
// as an F32 GGUF file, its values drawn by the same rule in the file's tensor order
// (docs/ple.md). Files are generated a chunk at a time, never held whole in memory.
#include <CLI/CLI.hpp>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include "cli_common.h"
#include "commands.h"
#include "gguf_convert.h"
#include "output_file.h"
#include "progress_bar.h"
#include "splitmix64.h"
#include "pocketlm/format/architecture.h"
#include "pocketlm/format/gguf.h"
#include "pocketlm/format/model_spec.h"

namespace pocketlm::cli {

static_assert(std::endian::native == std::endian::little, "checkpoints are little-endian");

void add_synth_command(CLI::App& app, SynthOptions& o) {
  CLI::App* cmd = app.add_subcommand(
      "synth", "write a deterministic random-weight checkpoint (llama2.c v0; GGUF for esp32-ple)");
  cmd->add_option("shape", o.shape, "the real model whose shape to use")
      ->required()
      ->type_name("stories260K|stories15M|stories42M|stories110M|tinyllama|esp32-ple");
  cmd->add_option("--seed", o.seed, "generator seed, in [-2^63, 2^64 - 1]; negative wraps modulo 2^64")
      ->required()
      ->type_name("INT");
  cmd->add_option("-o", o.output, "output file (written as FILE.tmp-XXXXXX, renamed when complete)")
      ->required()
      ->type_name("FILE");
}

namespace {

struct Shape {
  const char* name;
  ModelConfig config;  // dim, hidden_dim, n_layers, n_heads, n_kv_heads, vocab_size, seq_len
  // The model kind (general.architecture): llama shapes are llama2.c v0 files, any other
  // kind's an F32 GGUF file of its required tensors, its kind_params from `config`.
  const char* architecture = "llama";
};

constexpr Shape kShapes[] = {
    {"stories260K", {64, 172, 5, 8, 4, 512, 512}},
    {"stories15M", {288, 768, 6, 6, 6, 32000, 256}},
    {"stories42M", {512, 1376, 8, 8, 8, 32000, 1024}},
    {"stories110M", {768, 2048, 12, 12, 12, 32000, 1024}},
    // TinyLlama-1.1B's shape (grouped-query attention, 8 query heads per KV head), larger than
    // any cache: 4.1 GB in fp32, 1.1 GB in q80. Its classifier is shared like the others'
    // (TinyLlama's own is not), so it has 1.03 B parameters rather than 1.1 B.
    {"tinyllama", {2048, 5632, 22, 32, 4, 32000, 2048}},
    // The ESP32 write-up's per-layer-embedding model, with FFN 64 (its 66 is not whole blocks
    // of 32): vocab 32000, dim 96, 6 layers, 4 heads, context 256, per_layer_dim 128
    // (kind_params[0]), the classifier tied to the embedding; about 28 M parameters, 24.6 M of
    // them in the per-layer table.
    {"esp32-ple",
     {.dim = 96, .hidden_dim = 64, .n_layers = 6, .n_heads = 4, .n_kv_heads = 4, .vocab_size = 32000, .seq_len = 256,
      .kind_params = {128}},
     "pocketlm-ple"},
};

using K = TensorRole;
// v0 file order; the classifier is shared, so there is no wcls.
constexpr K kV0Order[] = {K::kTokenEmbedding, K::kRmsAtt, K::kWq, K::kWk, K::kWv, K::kWo, K::kRmsFfn,
                          K::kW1, K::kW2, K::kW3, K::kRmsFinal, K::kFreqCisReal, K::kFreqCisImag};

std::uint64_t value_count(const ModelSpec& spec, K kind) {
  std::uint64_t rows = 0, cols = 0;
  role_shape(spec.config, spec.role(kind), &rows, &cols);
  return rows * cols * (is_per_layer(kind) ? static_cast<std::uint64_t>(spec.config.n_layers) : 1);
}

// Draws `count` values of a tensor of role `kind` with `fan_in` columns, in row-major order,
// `buffer` at a time, each chunk handed to write(data, bytes): norms 1 + u / 8, matrices
// u / sqrt(fan_in), u uniform in [-1, 1) from `rng`; llama2.c v0's freq_cis zeros.
template <typename Write>
Status write_values(K kind, TensorUse use, std::uint64_t count, std::uint64_t fan_in, SplitMix64& rng, std::vector<float>& buffer,
                    ProgressBar& bar, Write write) {
  const bool zeros = kind == K::kFreqCisReal || kind == K::kFreqCisImag;  // unused: RoPE is computed
  const bool norm = use == TensorUse::kNorm;
  const float scale = 1.0f / std::sqrt(static_cast<float>(fan_in));
  for (std::uint64_t left = count; left > 0;) {
    const std::size_t n = left < buffer.size() ? static_cast<std::size_t>(left) : buffer.size();
    for (std::size_t i = 0; i < n; ++i) {
      if (zeros) {
        buffer[i] = 0.0f;
      } else {
        const float f = rng.next_signed_unit();
        buffer[i] = norm ? 1.0f + f * 0.125f : f * scale;  // f * 0.125f is exact: no FMA can differ
      }
    }
    POCKETLM_TRY(write(buffer.data(), n * sizeof(float)));
    bar.advance(n * sizeof(float));
    left -= n;
  }
  return Status();
}

// Writes every value of `kind` (all layers) of a v0 checkpoint.
Status write_tensor(const ModelSpec& spec, K kind, SplitMix64& rng, std::vector<float>& buffer, OutputFile& out,
                    ProgressBar& bar) {
  std::uint64_t rows = 0, fan_in = 0;
  role_shape(spec.config, spec.role(kind), &rows, &fan_in);
  return write_values(kind, spec.role(kind).use, value_count(spec, kind), fan_in, rng, buffer, bar,
                      [&out](const void* data, std::size_t bytes) { return out.write(data, bytes); });
}

// Writes the checkpoint; *total_bytes gets its size. The bar ends its line on return.
Status write_synth(const Shape& shape, std::uint64_t seed, const std::string& path, std::uint64_t* total_bytes) {
  ModelSpec spec;
  spec.config = shape.config;
  std::uint64_t total = 28;
  for (K kind : kV0Order) total += value_count(spec, kind) * sizeof(float);

  OutputFile out;
  POCKETLM_TRY(out.open(path, "-o"));
  const ModelConfig& c = shape.config;
  const std::int32_t header[7] = {c.dim, c.hidden_dim, c.n_layers, c.n_heads, c.n_kv_heads, c.vocab_size, c.seq_len};
  POCKETLM_TRY(out.write(header, sizeof header));
  ProgressBar bar(shape.name, total);
  bar.advance(sizeof header);
  SplitMix64 rng(seed);
  std::vector<float> buffer(64 * 1024);  // 256 KiB per write
  for (K kind : kV0Order) POCKETLM_TRY(write_tensor(spec, kind, rng, buffer, out, bar));
  POCKETLM_TRY(out.commit());
  *total_bytes = total;
  return Status();
}

// Another kind's shape: F32 GGUF of its required tensors in convert's tensor order, each
// tensor's values drawn by write_values's rule, one generator for the whole file.
Status write_synth_gguf(const Shape& shape, std::uint64_t seed, const std::string& path, std::uint64_t* total_bytes) {
  const Architecture* arch = find_architecture(shape.architecture);
  if (!arch) return Status::error(StatusCode::kUnsupported, "%s: architecture '%s' is not in this build", shape.name,
                                  shape.architecture);
  ModelSpec spec;
  spec.architecture = arch->name;
  spec.config = shape.config;
  std::uint64_t end = 0;
  for (int r = 0; r < kTensorRoleCount; ++r) {
    const auto role = static_cast<K>(r);
    if (!(arch->required & role_bit(role))) continue;  // tied: no output.weight
    std::uint64_t rows = 0, cols = 0;
    role_shape(spec.config, spec.role(role), &rows, &cols);
    if (!spec.add_role(role, TensorType::kF32, 0, rows, cols, 0, &end))
      return Status::error(StatusCode::kInvalidArgument, "%s: tensor %s does not fit 64 bits", shape.name,
                           spec.role(role).name);
  }
  std::vector<Fallback> fallbacks;
  std::uint32_t types[kTensorRoleCount];
  for (std::uint32_t& t : types) t = gguf::kGgmlF32;
  std::vector<OutTensor> tensors = plan_tensors(spec, types, &fallbacks);
  OutputFile out;
  POCKETLM_TRY(out.open(path, "-o"));
  FileSink sink(out);
  GgufWriter w(sink);
  POCKETLM_TRY(write_gguf_metadata(w, spec, shape.name, gguf::kGgmlF32, nullptr, tensors));
  std::uint64_t values = 0;
  for (const OutTensor& t : tensors) values += t.source.numel();
  ProgressBar bar(shape.name, values * sizeof(float));
  SplitMix64 rng(seed);
  std::vector<float> buffer(64 * 1024);
  for (const OutTensor& t : tensors) {
    POCKETLM_TRY(w.begin_tensor(t.bytes));
    POCKETLM_TRY(write_values(t.source.role, t.source.schema->use, t.source.numel(), t.source.cols, rng, buffer, bar,
                              [&w](const void* data, std::size_t bytes) { return w.tensor_data(data, bytes); }));
  }
  POCKETLM_TRY(w.finish());
  *total_bytes = w.bytes_written();
  return out.commit();
}

}  // namespace

int run_synth(const SynthOptions& o) {
  const Shape* shape = nullptr;
  for (const Shape& s : kShapes)
    if (o.shape == s.name) shape = &s;
  if (!shape)
    return fail("SHAPE: unknown shape '" + o.shape +
                "' (expected stories260K, stories15M, stories42M, stories110M, tinyllama or esp32-ple)");
  const bool gguf = std::strcmp(shape->architecture, "llama") != 0;
  std::uint64_t seed = 0;
  bool unused = false;
  Status st = parse_seed("--seed", o.seed, &seed, &unused);  // negative seeds wrap mod 2^64
  if (!st.ok()) return fail(st);
  std::uint64_t total = 0;
  st = gguf ? write_synth_gguf(*shape, seed, o.output, &total) : write_synth(*shape, seed, o.output, &total);
  if (!st.ok()) return fail(st);
  std::printf("wrote %s: %s seed %s, %s, %llu bytes\n", o.output.c_str(), o.shape.c_str(), o.seed.c_str(),
              gguf ? "GGUF v3 F32, no tokenizer (run it with -z tokenizer.bin)" : format_name(ModelFormat::kLlama2cV0),
              static_cast<unsigned long long>(total));
  return kExitOk;
}

}  // namespace pocketlm::cli
