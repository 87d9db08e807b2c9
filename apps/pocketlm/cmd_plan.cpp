// `pocketlm plan`: where every byte of a session would go, before anything is allocated. It
// takes run's flags that change the arena (tokenizer, --seq-len, --kernels; --threads for
// symmetry) with run's defaults, so its total is exactly the arena `run` allocates.
#include <CLI/CLI.hpp>
#include <cstdio>

#include "cli_common.h"
#include "commands.h"
#include "json_output.h"
#include "pocketlm/base/byte_size.h"
#include "pocketlm/base/format.h"
#include "ports/posix/file_storage.h"
#include "pocketlm/runtime/session.h"

namespace pocketlm::cli {

void add_plan_command(CLI::App& app, PlanOptions& o) {
  CLI::App* cmd = app.add_subcommand("plan", "print the memory plan of a run; exit 1 when over --heap");
  add_model_argument(cmd, &o.model);
  add_session_flags(cmd, kCmdPlan, &o);
  add_json_flag(cmd, &o.json);
}

int run_plan(const PlanOptions& o) {
  SessionOptions options;
  Status st = parse_session_flags(o, &options, nullptr);
  if (!st.ok()) return fail(st);
  ModelFiles files;
  st = files.open(o.model, o.tokenizer);
  if (!st.ok()) return fail(st);
  SessionPlan planned;
  st = plan_session(files.model, files.tokenizer, options, &planned);
  const ModelSpec& spec = planned.spec;
  const MemoryPlan& plan = planned.memory;
  if (st.ok() && !files.tokenizer && !spec.tokenizer.present)
    st = Status::error(StatusCode::kInvalidArgument, "%s: the model file carries no tokenizer; give one with -z",
                       o.model.c_str());
  if (!st.ok()) return fail(st);
  if (!files.tokenizer_warning.empty()) warn(files.tokenizer_warning);
  const ModelConfig& c = spec.config;
  const Kernels& kernels = session_kernels(options);
  const Status over = check_plan_fits(o.model.c_str(), options, planned);
  if (o.json) {
    nlohmann::json j = {{"model", o.model},
                        {"format", format_name(spec.format)},
                        {"config", config_json(c)},
                        {"seq_len", options.seq_len ? options.seq_len : c.seq_len},
                        {"tokenizer", files.tokenizer_label},
                        {"kernels", kernels.name},
                        {"threads", std::stoi(o.threads)},
                        {"device", options.device ? options.device->name : "host"},
                        {"plan", plan_json(plan)},
                        {"error", over.ok() ? nlohmann::json(nullptr) : nlohmann::json(over.message())}};
    print_json(j);
    return over.ok() ? kExitOk : fail(over);
  }
  std::printf("model %s: %s %s, dim %d, hidden_dim %d, %d layer%s, %d head%s, %d kv head%s, vocab %d, seq_len %d",
              o.model.c_str(), format_name(spec.format), spec.architecture, c.dim, c.hidden_dim, c.n_layers,
              plural_s(c.n_layers), c.n_heads, plural_s(c.n_heads), c.n_kv_heads, plural_s(c.n_kv_heads), c.vocab_size,
              options.seq_len ? options.seq_len : c.seq_len);
  std::printf("%s\n", kind_params_text(spec).c_str());
  std::printf("tokenizer %s, kernels %s, threads %d\n", files.tokenizer_label.c_str(), kernels.name, std::stoi(o.threads));
  print_plan(plan, stdout);
  if (!over.ok()) return fail(over);  // the tier that overflows, as run says it
  return kExitOk;
}

}  // namespace pocketlm::cli
