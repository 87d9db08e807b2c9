#include "commands.h"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <string>
#include <vector>

#include "cli_common.h"

namespace pocketlm::cli {

int run_cli(int argc, char** argv) {
  CLI::App app{"pocketlm: run small Llama-family models where every byte is counted"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "pocketlm 0.1.0");
  RunOptions run;
  PlanOptions plan;
  InspectOptions inspect;
  SynthOptions synth;
  ConvertOptions convert;
  BenchOptions bench;
  EvalOptions eval;
  ChatOptions chat;
  ConsoleOptions console;
  add_run_command(app, run);
  add_plan_command(app, plan);
  add_inspect_command(app, inspect);
  add_synth_command(app, synth);
  add_convert_command(app, convert);
  add_bench_command(app, bench);
  add_devices_command(app);
  add_eval_command(app, eval);
  add_chat_command(app, chat);
  add_console_command(app, console);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ExtrasError& e) {
    // CLI11 lists the unexpected words in reverse order ("1M --heap"): name them in the order
    // given, with the command that did not expect them.
    for (const CLI::App* sub : app.get_subcommands()) {
      const std::vector<std::string> extra = sub->remaining();
      if (extra.empty()) continue;
      std::string words;
      for (const std::string& w : extra) words += (words.empty() ? "" : " ") + w;
      const std::string& first = extra[0];
      const bool option = first.size() > 1 && first[0] == '-';
      return fail(sub->get_name() + ": unexpected argument(s) '" + words + "'" +
                  (option ? ": " + first + " is not an option of " + sub->get_name() : "") + " (see pocketlm " +
                  sub->get_name() + " --help)");
    }
    return fail(std::string(e.what()) + " (see pocketlm --help)");
  } catch (const CLI::ParseError& e) {
    // One line, exit code 1, like every other bad input.
    return fail(std::string(e.what()) + " (see pocketlm --help)");
  }
  if (app.got_subcommand("run")) return run_run(run);
  if (app.got_subcommand("plan")) return run_plan(plan);
  if (app.got_subcommand("inspect")) return run_inspect(inspect);
  if (app.got_subcommand("synth")) return run_synth(synth);
  if (app.got_subcommand("convert")) return run_convert(convert);
  if (app.got_subcommand("bench")) return run_bench(bench);
  if (app.got_subcommand("devices")) return run_devices();
  if (app.got_subcommand("eval")) return run_eval(eval);
  if (app.got_subcommand("chat")) return run_chat(chat);
  if (app.got_subcommand("console")) return run_console(console);
  return fail("no command given (see pocketlm --help)");
}

}  // namespace pocketlm::cli
