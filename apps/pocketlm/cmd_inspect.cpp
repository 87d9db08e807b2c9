// `pocketlm inspect`: format, config, group size and the tensor table of a checkpoint.
#include <CLI/CLI.hpp>
#include <cstdio>

#include "cli_common.h"
#include "commands.h"
#include "pocketlm/format/model_reader.h"
#include "ports/posix/file_storage.h"

namespace pocketlm::cli {

void add_inspect_command(CLI::App& app, InspectOptions& o) {
  CLI::App* cmd = app.add_subcommand("inspect", "print a checkpoint's format, config and tensor table");
  add_model_argument(cmd, &o.model);
}

int run_inspect(const InspectOptions& o) {
  FileStorage model;
  Status st = model.open(o.model.c_str(), "model");
  if (!st.ok()) return fail(st);
  ModelSpec spec;
  st = read_model_spec(model, &spec);
  if (!st.ok()) return fail(st);
  const ModelConfig& c = spec.config;
  std::printf("file        %s (%llu bytes)\n", o.model.c_str(), static_cast<unsigned long long>(spec.file_bytes));
  std::printf("format      %s\n", format_name(spec.format));
  std::printf("kind        %s\n", spec.architecture);
  std::printf("config      dim %d, hidden_dim %d, n_layers %d, n_heads %d, n_kv_heads %d, vocab_size %d, seq_len %d",
              c.dim, c.hidden_dim, c.n_layers, c.n_heads, c.n_kv_heads, c.vocab_size, c.seq_len);
  std::printf("%s\n", kind_params_text(spec).c_str());
  std::printf("derived     head_size %d, kv_dim %d\n", c.head_size(), c.kv_dim());
  std::printf("classifier  %s\n", spec.shared_classifier ? "shared with the token embedding" : "separate (wcls)");
  if (spec.format == ModelFormat::kGguf) {
    const EmbeddedTokenizer& t = spec.tokenizer;
    if (t.present)
      std::printf("tokenizer   embedded: %s, %d tokens, BOS %d, EOS %d (-z is optional)\n", t.model, t.count,
                  c.bos_id, c.eos_id);
    else if (t.model[0])
      std::printf("tokenizer   embedded '%s', which pocketlm does not read: give -z\n", t.model);
    else
      std::printf("tokenizer   none: give -z\n");
    std::printf("norm eps    %g, rope theta %g\n", static_cast<double>(c.rms_eps), static_cast<double>(c.rope_theta));
  }
  if (spec.group_size)
    std::printf("group size  %d\n", spec.group_size);
  else if (spec.format != ModelFormat::kGguf)
    std::printf("group size  - (fp32)\n");
  std::printf("\n%-16s %5s %-14s %-5s %12s %12s\n", "tensor", "layer", "shape", "type", "offset", "bytes");
  std::uint64_t params = 0;
  for (int i = 0; i < spec.tensor_count(); ++i) {
    const TensorInfo t = spec.tensor(i);
    char shape[32];
    std::snprintf(shape, sizeof shape, "[%llu, %llu]", static_cast<unsigned long long>(t.rows),
                  static_cast<unsigned long long>(t.cols));
    char layer[16] = "-";
    if (t.layer >= 0) std::snprintf(layer, sizeof layer, "%d", t.layer);
    std::printf("%-16s %5s %-14s %-5s %12llu %12llu\n", t.schema->name, layer, shape, type_name(t.type),
                static_cast<unsigned long long>(t.offset), static_cast<unsigned long long>(t.bytes()));
    if (t.schema->use != TensorUse::kUnused) params += t.numel();
  }
  std::printf("\nparameters  %llu\nheader      %llu bytes\n", static_cast<unsigned long long>(params),
              static_cast<unsigned long long>(spec.header_bytes));
  return kExitOk;
}

}  // namespace pocketlm::cli
