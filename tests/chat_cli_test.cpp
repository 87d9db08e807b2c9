// pocketlm chat, run -m chat and pocketlm console as a user runs them: messages from a file on
// stdin or from an OSK script (UTF-16LE), replies, notices, PNG frames, and one-line errors.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <string>
#include <vector>

#include "test_support.h"

namespace pocketlm {
namespace {

using test::run_pocketlm;
using test::run_pocketlm_with_input;

std::string model() { return test::model_path("stories260K.bin"); }
std::string tok512() { return test::model_path("tok512.bin"); }

std::string write_text(const std::string& name, const std::string& text) {
  const std::string path = test::temp_dir() + "/" + name;
  test::write_file(path, std::vector<unsigned char>(text.begin(), text.end()));
  return path;
}

int count_of(const std::string& haystack, const std::string& needle) {
  int n = 0;
  for (std::size_t at = haystack.find(needle); at != std::string::npos; at = haystack.find(needle, at + 1)) ++n;
  return n;
}

// UTF-16LE of a BMP-only UTF-8 string (the test's own encoder), each string ended by U+0000.
std::vector<unsigned char> osk_file(const std::vector<std::u16string>& strings) {
  std::vector<unsigned char> out;
  for (const std::u16string& s : strings) {
    for (char16_t c : s) {
      out.push_back(static_cast<unsigned char>(c & 0xFF));
      out.push_back(static_cast<unsigned char>(c >> 8));
    }
    out.push_back(0);
    out.push_back(0);
  }
  return out;
}

TEST(ChatCli, ThreeMessagesFromAPipe) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
  const std::string input = write_text("in.txt", "Once upon a time\nShe saw a cat\nThe end\n");
  const auto r = run_pocketlm_with_input({"chat", model(), "-z", tok512(), "-t", "0", "-n", "20"}, input);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(count_of(r.out, "User: "), 4) << r.out;  // the fourth meets the end of input
  EXPECT_EQ(count_of(r.out, "Assistant: "), 3) << r.out;
  EXPECT_NE(r.out.find("User: She saw a cat\n"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("turn 3: prefill"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("context full"), std::string::npos) << r.err;
}

TEST(ChatCli, ContextFullShowsANotice) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
  std::string lines;
  for (int i = 0; i < 8; ++i) lines += "Then the little dog ran to the park\n";
  const std::string input = write_text("in.txt", lines);
  const auto r =
      run_pocketlm_with_input({"chat", model(), "-z", tok512(), "-t", "0", "-n", "16", "--seq-len", "64"}, input);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("[context full: dropping the"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("kept opening"), std::string::npos) << r.err;
}

TEST(ChatCli, TooLongAMessageIsRefusedAndTheChatGoesOn) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
  std::string longline;
  for (int i = 0; i < 40; ++i) longline += "Once upon a time ";
  const std::string input = write_text("in.txt", longline + "\nShe smiled\n");
  const auto r =
      run_pocketlm_with_input({"chat", model(), "-z", tok512(), "-t", "0", "-n", "8", "--seq-len", "64"}, input);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("[message refused: it is"), std::string::npos) << r.err;
  // 64 positions less the reply reserve, min(-n 8, 64 / 4).
  EXPECT_NE(r.err.find("at most 56 fit"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("turn 1: prefill"), std::string::npos) << r.err;
}

// A 1 MiB line is refused from its length alone, before it is encoded.
TEST(ChatCli, AMegabyteMessageIsRefusedBeforeEncoding) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
  std::string longline;
  while (longline.size() < (1u << 20)) longline += "Once upon a time ";
  const std::string input = write_text("in.txt", longline + "\nShe smiled\n");
  const auto r = run_pocketlm_with_input({"chat", model(), "-z", tok512(), "-t", "0", "-n", "8"}, input);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("[message refused: it is at least "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("turn 1: prefill"), std::string::npos) << r.err;
}

TEST(ChatCli, RunModeChatReadsTheSystemPromptThenMessages) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
  // run.c's chat(): without -y the first line is the system prompt; the template is llama2.
  const std::string input = write_text("in.txt", "You are a storyteller\nTell me a story\n");
  const auto r = run_pocketlm_with_input({"run", model(), "-z", tok512(), "-m", "chat", "-t", "0", "-n", "12"}, input);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("Enter system prompt (optional): You are a storyteller\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Assistant: "), std::string::npos) << r.out;
}

TEST(ChatCli, UnknownTemplateIsAOneLineError) {
  const auto r = run_pocketlm({"chat", model(), "-z", tok512(), "--template", "chatml"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("--template: unknown template 'chatml'"), std::string::npos) << r.err;
  EXPECT_EQ(count_of(r.err, "\n"), 1) << r.err;
}

TEST(ChatCli, RunModeChatRefusesTokenLog) {
  const std::string log = test::temp_dir() + "/log.txt";
  const auto r = run_pocketlm({"run", model(), "-z", tok512(), "-m", "chat", "--token-log", log});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("--token-log: not available with -m chat"), std::string::npos) << r.err;
  EXPECT_EQ(count_of(r.err, "\n"), 1) << r.err;
  EXPECT_FALSE(test::file_exists(log));
}

TEST(ConsoleCli, OskScriptDrivesThePspScreen) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
#if !POCKETLM_HAVE_PNG
  GTEST_SKIP() << "this build has no libpng";
#endif
  const std::string dir = test::temp_dir();
  test::write_file(dir + "/osk.bin", osk_file({u"Once upon a time", u"ねこ and a dog"}));
  const auto r = run_pocketlm({"console", model(), "-z", tok512(), "--device", "psp", "--osk", dir + "/osk.bin",
                               "--png", dir + "/screen.png", "-t", "0", "-n", "30"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(test::file_exists(dir + "/screen-1.png"));
  EXPECT_TRUE(test::file_exists(dir + "/screen-2.png"));
  EXPECT_TRUE(test::file_exists(dir + "/screen.png"));
  EXPECT_FALSE(test::file_exists(dir + "/screen-3.png"));
  // The message went through UTF-16LE -> UTF-8 as on the device.
  EXPECT_NE(r.out.find("> \xE3\x81\xAD\xE3\x81\x93 and a dog\n"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("480x272 screen (60 x 34 cells)"), std::string::npos) << r.err;
  // PNG: 480 x 272 in the IHDR (bytes 16..23, big-endian).
  const std::vector<unsigned char> png = test::read_file(dir + "/screen.png");
  ASSERT_GT(png.size(), 24u);
  EXPECT_EQ(png[1], 'P');
  EXPECT_EQ((png[18] << 8) | png[19], 480);
  EXPECT_EQ((png[22] << 8) | png[23], 272);
}

TEST(ConsoleCli, Esp32s3IsASmallDisplay) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
#if !POCKETLM_HAVE_PNG
  GTEST_SKIP() << "this build has no libpng";
#endif
  const std::string dir = test::temp_dir();
  test::write_file(dir + "/osk.bin", osk_file({u"Once upon a time"}));
  const auto r = run_pocketlm({"console", model(), "-z", tok512(), "--device", "esp32s3", "--osk", dir + "/osk.bin",
                               "--png", dir + "/s.png", "-t", "0", "-n", "10"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("320x240 screen (40 x 30 cells)"), std::string::npos) << r.err;
  const std::vector<unsigned char> png = test::read_file(dir + "/s.png");
  ASSERT_GT(png.size(), 24u);
  EXPECT_EQ((png[18] << 8) | png[19], 320);
  EXPECT_EQ((png[22] << 8) | png[23], 240);
}

void expect_one_line_error(const test::CommandResult& r, const std::vector<std::string>& needles) {
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(count_of(r.err, "\n"), 1) << r.err;
  EXPECT_EQ(r.err.rfind("pocketlm: error: ", 0), 0u) << r.err;
  for (const std::string& n : needles) EXPECT_NE(r.err.find(n), std::string::npos) << "missing '" << n << "': " << r.err;
}

std::vector<std::string> console_args(const std::string& osk, const std::string& device = "psp") {
  return {"console", model(), "-z", tok512(), "--device", device, "--osk", osk, "--png",
          test::temp_dir() + "/x.png"};
}

TEST(ConsoleCli, MissingOskFile) {
  const std::string path = test::temp_dir() + "/no-such.osk";
  expect_one_line_error(run_pocketlm(console_args(path)), {"--osk", path, "No such file"});
}

TEST(ConsoleCli, OddOskFile) {
  const std::string path = test::temp_dir() + "/odd.osk";
  test::write_file(path, {'A', 0, 'B'});
  expect_one_line_error(run_pocketlm(console_args(path)), {"--osk", path, "3 bytes", "UTF-16LE"});
}

TEST(ConsoleCli, EmptyOskString) {
  const std::string path = test::temp_dir() + "/empty.osk";
  test::write_file(path, {'A', 0, 0, 0, 0, 0});
  expect_one_line_error(run_pocketlm(console_args(path)), {"--osk", path, "string 2", "empty"});
}

// A plain text file instead of a UTF-16LE script: refused before the model is loaded, not
// drawn as CJK mojibake.
TEST(ConsoleCli, Utf8TextAsOskScriptIsRefused) {
  const std::string path = write_text("prompts.txt", "Once upon a time\nThe dog ran\n");
  expect_one_line_error(run_pocketlm(console_args(path)),
                        {"--osk: " + path + ": looks like UTF-8 text (29 bytes, no NUL byte)", "expected UTF-16LE"});
}

TEST(ConsoleCli, FifoOskDoesNotHang) {
  const std::string path = test::temp_dir() + "/osk.fifo";
  ASSERT_EQ(::mkfifo(path.c_str(), 0644), 0);
  bool in_time = false;
  expect_one_line_error(test::run_pocketlm_with_fifo(console_args(path), path, 5, &in_time), {path, "--osk", "FIFO"});
  EXPECT_TRUE(in_time) << "pocketlm blocked on the FIFO";
}

// -y has a place only in the llama2 template: under the default one it would be dropped.
TEST(ChatCli, SystemPromptNeedsTheLlama2Template) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
  const std::string input = write_text("in.txt", "Once upon a time\n");
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"chat", model(), "-z", tok512(), "-y", "You are a pirate."},
        std::vector<std::string>{"chat", model(), "-z", tok512(), "-y", "You are a pirate.", "--template", "none"}}) {
    const auto r = run_pocketlm_with_input(args, input);
    expect_one_line_error(r, {"-y: a system prompt needs --template llama2"});
    EXPECT_EQ(r.out, "");
  }
  const std::string osk = test::temp_dir() + "/osk.bin";
  test::write_file(osk, osk_file({u"Hi"}));
  std::vector<std::string> console = console_args(osk);
  console.insert(console.end(), {"-y", "You are a pirate."});
  expect_one_line_error(run_pocketlm(console), {"-y: a system prompt needs --template llama2"});
  // With the llama2 template it goes into the first message.
  const auto ok = run_pocketlm_with_input(
      {"chat", model(), "-z", tok512(), "-t", "0", "-n", "4", "-y", "You are a pirate.", "--template", "llama2"}, input);
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
}

// Counts of one are singular: "reply 1 token", "1 turn".
TEST(ChatCli, CountsOfOneAreSingular) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
  const std::string input = write_text("in.txt", "a\n");
  const auto r = run_pocketlm_with_input({"chat", model(), "-z", tok512(), "-t", "0", "-n", "1"}, input);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("reply 1 token, "), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find(" 1 tokens"), std::string::npos) << r.err;
#if POCKETLM_HAVE_PNG
  const std::string osk = test::temp_dir() + "/osk.bin";
  test::write_file(osk, osk_file({u"Hi"}));
  const auto c = run_pocketlm({"console", model(), "-z", tok512(), "--osk", osk, "--png", test::temp_dir() + "/s.png",
                               "-t", "0", "-n", "4"});
  ASSERT_EQ(c.exit_code, 0) << c.err;
  EXPECT_NE(c.err.find("pocketlm: 1 turn on a 480x272 screen"), std::string::npos) << c.err;
#endif
}

TEST(ConsoleCli, DeviceWithoutAScreen) {
  const std::string dir = test::temp_dir();
  test::write_file(dir + "/osk.bin", osk_file({u"Hi"}));
  expect_one_line_error(run_pocketlm(console_args(dir + "/osk.bin", "host")), {"--device", "'host'", "no screen"});
  expect_one_line_error(run_pocketlm(console_args(dir + "/osk.bin", "gameboy")), {"--device", "'gameboy'"});
}

}  // namespace
}  // namespace pocketlm
