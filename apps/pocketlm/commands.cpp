#include "commands.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "build_info.h"
#include "cli_common.h"
#include "pocketlm/kernels/kernels.h"

namespace pocketlm::cli {

namespace {

// Levenshtein distance, for "did you mean": command names are a few letters long.
std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// "pocketlm X.Y.Z (commit C, Release build)" and the kernel backends: compiled in, and which of
// them this CPU runs (the default first).
std::string version_text() {
  std::string text = std::string("pocketlm ") + POCKETLM_VERSION + " (commit " + POCKETLM_GIT_COMMIT + ", " +
                     POCKETLM_BUILD_TYPE + " build)\nkernels compiled in: ";
  std::string runnable;
  for (const char* const* name = kernel_names(); *name; ++name) {
    text += std::string(name == kernel_names() ? "" : ", ") + *name;
    if (find_kernels(*name)) runnable += std::string(runnable.empty() ? "" : ", ") + *name;
  }
  return text + "\nkernels this CPU runs: " + runnable + " (default: " + default_kernels().name + ")";
}

// The first word of argv when it is not an option: a command name, `help [COMMAND]`, or a
// mistake. Checked before CLI11, which would call any unknown word "a subcommand is
// required" and skip a stray word before a command (`pocketlm foo run`). Returns an exit
// code, or -1 to go on parsing `args` (`help run` becomes `run --help`).
int check_command_word(CLI::App& app, std::vector<std::string>* args) {
  if (args->size() == 1) return fail("no command given (see pocketlm help)");
  if ((*args)[1].empty() || (*args)[1][0] == '-') return -1;
  if ((*args)[1] == "help") {
    if (args->size() == 2) {
      *args = {(*args)[0], "--help"};
      return -1;
    }
    *args = {(*args)[0], (*args)[2], "--help"};
  }
  const std::string& word = (*args)[1];
  std::string names, closest;
  std::size_t best = 3;  // suggest only within two edits
  for (const CLI::App* sub : app.get_subcommands({})) {
    if (sub->get_name() == word) return -1;
    names += (names.empty() ? "" : ", ") + sub->get_name();
    const std::size_t d = edit_distance(word, sub->get_name());
    if (d < best) best = d, closest = sub->get_name();
  }
  if (!closest.empty()) return fail("'" + word + "' is not a pocketlm command; did you mean '" + closest + "'?");
  return fail("'" + word + "' is not a pocketlm command (commands: " + names + "; see pocketlm help)");
}

// The option of `cmd` nearest to `word` ("--heap" for "--hep", "--token-log" for
// "--tokenlog"), within two edits, or "" when none is.
std::string closest_option(const CLI::App& cmd, const std::string& word) {
  const std::string flag = word.substr(0, word.find('='));
  if (flag.size() <= 2) return "";  // -x: every one-letter flag is one edit away
  std::string best_name;
  std::size_t best = 3;
  for (const CLI::Option* opt : cmd.get_options()) {
    std::vector<std::string> names;
    for (const std::string& l : opt->get_lnames()) names.push_back("--" + l);
    for (const std::string& sn : opt->get_snames()) names.push_back("-" + sn);
    for (const std::string& name : names) {
      if (name == "--help" || name == "-h") continue;  // "--hep 24MiB" means --heap
      const std::size_t d = edit_distance(flag, name);
      if (d < best && d > 0) best = d, best_name = name;
    }
  }
  return best_name;
}

// CLI11's help and version texts, written through stdio as every other output (std::cout's
// failed flush would leave stdout's error flag without its errno: std_streams.h).
int print_exit(CLI::App& app, const CLI::Error& e) {
  std::ostringstream out, err;
  const int code = app.exit(e, out, err);
  std::fputs(out.str().c_str(), stdout);
  std::fputs(err.str().c_str(), stderr);
  return code;
}

}  // namespace

int run_cli(int argc, char** argv) {
  CLI::App app{"pocketlm: run small Llama-family models where every byte is counted\n"
               "pocketlm help COMMAND: the flags of one command"};
  app.name("pocketlm");
  app.require_subcommand(1);
  app.set_version_flag("--version", version_text());
  // A flag given twice: the last wins, as llama2.c's argv loop does (CLI11 would refuse it);
  // the commands' options inherit this default.
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  RunOptions run;
  PlanOptions plan;
  InspectOptions inspect;
  SynthOptions synth;
  ConvertOptions convert;
  BenchOptions bench;
  EvalOptions eval;
  ChatOptions chat;
  ConsoleOptions console;
  DevicesOptions devices;
  add_run_command(app, run);
  add_plan_command(app, plan);
  add_inspect_command(app, inspect);
  add_synth_command(app, synth);
  add_convert_command(app, convert);
  add_bench_command(app, bench);
  add_devices_command(app, devices);
  add_eval_command(app, eval);
  add_chat_command(app, chat);
  add_console_command(app, console);
  std::vector<std::string> args(argv, argv + argc);
  const int word = check_command_word(app, &args);
  if (word >= 0) return word;
  try {
    // CLI11 takes the words after the program name, last first.
    std::vector<std::string> words(args.rbegin(), args.rend() - 1);
    app.parse(words);
  } catch (const CLI::CallForHelp& e) {
    return print_exit(app, e);
  } catch (const CLI::CallForAllHelp& e) {
    return print_exit(app, e);
  } catch (const CLI::CallForVersion& e) {
    return print_exit(app, e);
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
      const std::string closest = option ? closest_option(*sub, first) : "";
      return fail(sub->get_name() + ": unexpected argument(s) '" + words + "'" +
                  (option ? ": " + first + " is not an option of " + sub->get_name() : "") +
                  (closest.empty() ? "" : "; did you mean " + closest + "?") + " (see pocketlm help " +
                  sub->get_name() + ")");
    }
    return fail(std::string(e.what()) + " (see pocketlm help)");
  } catch (const CLI::ArgumentMismatch& e) {
    // CLI11 says "--heap: 1 required SIZE missing": a flag given without its value.
    const std::vector<CLI::App*> given = app.get_subcommands();
    const std::string command = given.empty() ? "pocketlm" : given[0]->get_name();
    const std::string what = e.what();
    const std::size_t colon = what.find(": 1 required ");
    const std::size_t missing = what.rfind(" missing");
    if (colon != std::string::npos && missing != std::string::npos && missing > colon + 13)
      return fail(what.substr(0, colon) + ": needs a value (" + what.substr(colon + 13, missing - colon - 13) +
                  "), and none was given (see pocketlm help " + command + ")");
    return fail(command + ": " + what + " (see pocketlm help " + command + ")");
  } catch (const CLI::ParseError& e) {
    // One line, exit code 1, like every other bad input; named after the command it concerns.
    const std::vector<CLI::App*> given = app.get_subcommands();
    if (!given.empty())
      return fail(given[0]->get_name() + ": " + e.what() + " (see pocketlm help " + given[0]->get_name() + ")");
    return fail(std::string(e.what()) + " (see pocketlm help)");
  }
  if (app.got_subcommand("run")) return run_run(run);
  if (app.got_subcommand("plan")) return run_plan(plan);
  if (app.got_subcommand("inspect")) return run_inspect(inspect);
  if (app.got_subcommand("synth")) return run_synth(synth);
  if (app.got_subcommand("convert")) return run_convert(convert);
  if (app.got_subcommand("bench")) return run_bench(bench);
  if (app.got_subcommand("devices")) return run_devices(devices);
  if (app.got_subcommand("eval")) return run_eval(eval);
  if (app.got_subcommand("chat")) return run_chat(chat);
  if (app.got_subcommand("console")) return run_console(console);
  return fail("no command given (see pocketlm --help)");
}

}  // namespace pocketlm::cli
