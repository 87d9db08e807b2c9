// `pocketlm console`: the chat on an emulated device screen. Each message comes from an OSK
// script (what the PSP's on-screen keyboard would return: UTF-16LE, text/osk_script.h), goes
// through the same UTF-16LE -> UTF-8 step as on the device, and is drawn with the reply on the
// device profile's screen (ui/console.h); a PNG of the screen is written after every turn.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <string>
#include <vector>

#include "chat_driver.h"
#include "chat_setup.h"
#include "cli_common.h"
#include "std_streams.h"
#include "commands.h"
#include "output_file.h"
#include "png_file.h"
#include "pocketlm/runtime/device_profile.h"
#include "pocketlm/text/osk_script.h"
#include "pocketlm/text/utf16.h"
#include "pocketlm/ui/console.h"

namespace pocketlm::cli {

// Colours in the PSP's 8888 order (0xAABBGGRR).
inline constexpr std::uint32_t kScreenBackground = 0xFF000000u;  // black
inline constexpr std::uint32_t kPromptColor = 0xFF40D0FFu;       // amber: the user's message, notices
inline constexpr std::uint32_t kGeneratedColor = 0xFFE0E0E0u;    // light grey: the reply

void add_console_command(CLI::App& app, ConsoleOptions& o) {
  CLI::App* cmd = app.add_subcommand(
      "console", "the chat on an emulated device screen, driven by an OSK script; writes a PNG per turn");
  add_model_argument(cmd, &o.model);
  cmd->add_option("--osk", o.osk,
                  "OSK script: UTF-16LE strings, each ended by U+0000 (what the PSP's on-screen keyboard returns), "
                  "one per message")
      ->required()
      ->type_name("FILE");
  cmd->add_option("--png", o.png,
                  "the screen after the last turn; OUT-1.png, OUT-2.png, ... after each turn (for OUT.png)")
      ->required()
      ->type_name("FILE");
  add_reply_steps_flag(cmd, &o.steps);
  cmd->add_option("-y", o.system_prompt, "system prompt (needs --template llama2)")->type_name("TEXT");
  cmd->add_option("--template", o.chat_template, "none (default) or llama2, as for pocketlm chat")
      ->type_name("none|llama2");
  add_session_flags(cmd, kCmdConsole, &o);
}

namespace {

// OUT.png -> OUT-<n>.png.
std::string frame_path(const std::string& png, int n) {
  const std::string suffix = ".png";
  const bool has = png.size() > suffix.size() && png.compare(png.size() - suffix.size(), suffix.size(), suffix) == 0;
  const std::string stem = has ? png.substr(0, png.size() - suffix.size()) : png;
  return stem + "-" + std::to_string(n) + suffix;
}

// Before the first turn is generated: every PNG the script will write (OUT-1.png ... OUT-n.png,
// then OUT.png) may be renamed over its target, and a temporary file can be created beside
// them (their directory exists and is writable).
Status check_png_outputs(const ConsoleOptions& o, int turns, const std::vector<InputPath>& inputs) {
  for (int n = 1; n <= turns; ++n) POCKETLM_TRY(check_output(frame_path(o.png, n), "--png", inputs));
  POCKETLM_TRY(check_output(o.png, "--png", inputs));
  OutputFile probe;  // removed again when it goes out of scope
  return probe.open(o.png, "--png");
}

}  // namespace

int run_console(const ConsoleOptions& o) {
  const DeviceProfile* device = nullptr;
  // --device-file replaces console's default --device psp.
  Status found = find_device_flag(o.device_file.empty() ? o.device : "", o.device_file, &device);
  if (!found.ok()) return fail(found);
  if (device->screen_width == 0)
    return fail(std::string(o.device_file.empty() ? "--device: '" : "--device-file: '") + device->name +
                "' has no screen (profiles with one: " + device_choices(true) + ")");
  ChatSetup setup;
  Status st = parse_chat_flags(o.chat_template, o.temperature, o.topp, o.seed, o.steps, &setup);
  if (st.ok()) st = check_system_prompt(setup.chat_template, !o.system_prompt.empty());
  if (!st.ok()) return fail(st);

  std::string osk_bytes;
  st = read_whole_file(o.osk, "--osk", &osk_bytes);
  if (!st.ok()) return fail(st);
  const std::string osk_label = "--osk: " + o.osk;
  OskScript script;
  st = script.init(reinterpret_cast<const unsigned char*>(osk_bytes.data()), osk_bytes.size(), osk_label.c_str());
  if (!st.ok()) return fail(st);

  ChatContext ctx;
  SessionFlags flags = o;
  if (!o.device_file.empty()) flags.device.clear();  // the board's file instead of the default psp
  st = start_chat(o.model, flags, setup, &ctx);
  if (!st.ok()) return fail(st);
  Session& session = ctx.session;
  st = check_png_outputs(o, script.count(), {{"model", o.model}, {"-z", ctx.files.tokenizer_file.name()}, {"--osk", o.osk}});
  if (!st.ok()) return fail(st);

  std::vector<std::uint32_t> pixels(static_cast<std::size_t>(device->screen_width) *
                                    static_cast<std::size_t>(device->screen_height));
  Framebuffer fb{pixels.data(), device->screen_width, device->screen_height, device->screen_width};
  Console console;
  st = console.init(fb, &kConsoleFont, kScreenBackground, kPromptColor);
  if (!st.ok()) return fail(st);

  ChatDriver driver(session, setup.chat_template, o.system_prompt, setup.max_reply);
  driver.on_text = [&console](const char* text, std::size_t len) {
    console.write(text, len);
    std::fwrite(text, 1, len, stdout);
  };
  driver.on_notice = [&console](const std::string& notice) {
    console.set_color(kPromptColor);
    if (console.cursor_column() != 0) console.put('\n');
    console.write(notice.data(), notice.size());
    console.put('\n');
    console.set_color(kGeneratedColor);
    flush_stdout();
    std::fprintf(stderr, "pocketlm: %s\n", notice.c_str());
  };

  const unsigned char* units = nullptr;
  std::size_t unit_bytes = 0;
  int turn = 0;
  std::vector<char> utf8;
  while (script.next(&units, &unit_bytes)) {
    ++turn;
    // The device's path: the OSK's UTF-16LE to UTF-8.
    utf8.resize(unit_bytes / 2 * 3 + 1);
    std::size_t n = 0;
    st = utf16le_to_utf8(units, unit_bytes, utf8.data(), utf8.size(), &n);
    if (!st.ok()) return fail(osk_label + ": string " + std::to_string(turn) + ": " + st.message());
    const std::string message(utf8.data(), n);
    console.set_color(kPromptColor);
    if (console.cursor_column() != 0) console.put('\n');
    console.write("> ", 2);
    console.write(message.data(), message.size());
    console.put('\n');
    console.set_color(kGeneratedColor);
    std::printf("> %s\n", message.c_str());
    ChatTurnResult result;
    st = driver.turn(message, &result);
    if (!st.ok()) return fail(st);
    std::printf("\n");
    flush_stdout();
    st = write_png(fb, frame_path(o.png, turn), "--png");
    if (!st.ok()) return fail(st);
  }
  st = write_png(fb, o.png, "--png");
  if (!st.ok()) return fail(st);
  std::fprintf(stderr, "pocketlm: %s on a %dx%d screen (%d x %d cells), kv cache %d of %s, wrote %s\n",
               counted(turn, "turn").c_str(), fb.width, fb.height, console.columns(), console.rows(),
               session.chat_position(), counted(session.seq_len(), "position").c_str(), o.png.c_str());
  return kExitOk;
}

}  // namespace pocketlm::cli
