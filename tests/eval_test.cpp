// `pocketlm eval`: the held-out split, and the numbers it prints checked against an independent
// computation through the engine API (forward passes and a log-softmax in the test).
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>

#include "pocketlm/runtime/session.h"
#include "ports/posix/file_storage.h"
#include "story_split.h"
#include "test_support.h"

namespace pocketlm {
namespace {

using test::run_pocketlm;

TEST(StorySplit, StoriesAreCutAtSeparatorLines) {
  const auto s = cli::split_stories("One.\n\nTwo lines.\n<|endoftext|>\nStory two.\n<|endoftext|>\n\n<|endoftext|>\nLast");
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0], "One.\n\nTwo lines.");
  EXPECT_EQ(s[1], "Story two.");
  EXPECT_EQ(s[2], "Last");
  EXPECT_EQ(cli::split_stories("a <|endoftext|> b").size(), 1u);  // only whole lines separate
}

TEST(StorySplit, HeldOutIsAFixedFivePercent) {
  POCKETLM_REQUIRE_FILES("data/tinystories-5k.txt");
  std::ifstream in(test::find_file("data/tinystories-5k.txt"), std::ios::binary);
  ASSERT_TRUE(in) << "no tinystories-5k.txt";
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto stories = cli::split_stories(text);
  EXPECT_EQ(stories.size(), 5478u);
  std::size_t held = 0, held_other_seed = 0, both = 0;
  for (std::size_t i = 0; i < stories.size(); ++i) {
    held += cli::is_heldout_story(i);
    held_other_seed += cli::is_heldout_story(i, 7);
    both += cli::is_heldout_story(i) && cli::is_heldout_story(i, 7);
  }
  EXPECT_EQ(held, 278u);  // the split docs/eval.md's table reports
  EXPECT_NEAR(static_cast<double>(held_other_seed) / stories.size(), 0.05, 0.01);
  EXPECT_LT(both, held / 2);  // another seed picks other stories
  EXPECT_TRUE(cli::is_heldout_story(0) == cli::is_heldout_story(0, cli::kDefaultSplitSeed));
}

double field(const std::string& out, const std::string& name) {
  const std::size_t at = out.find(name);
  if (at == std::string::npos) return NAN;
  return std::strtod(out.c_str() + at + name.size(), nullptr);
}

// Cross-entropy of the whole story through the engine: BOS, the story's tokens, each predicted
// from all before it (one window).
double independent_nll(const std::string& story, std::uint64_t* tokens) {
  FileStorage model, tok;
  EXPECT_TRUE(model.open(test::model_path("stories260K.bin").c_str(), "model").ok());
  EXPECT_TRUE(tok.open(test::model_path("tok512.bin").c_str(), "tokenizer").ok());
  Session s;
  EXPECT_TRUE(s.open(model, tok, SessionOptions{}).ok());
  std::vector<std::int32_t> ids((story.size() + 3) * Tokenizer::kEncodeWordsPerSlot);
  int n = 0;
  EXPECT_TRUE(s.tokenizer().encode(story.data(), story.size(), true, false, ids.data(), ids.size(), &n).ok());
  double nll = 0;
  for (int p = 0; p + 1 < n; ++p) {
    const float* l = s.model().forward(ids[static_cast<std::size_t>(p)], p);
    double max = l[0], sum = 0;
    for (int i = 0; i < 512; ++i) max = std::max(max, static_cast<double>(l[i]));
    for (int i = 0; i < 512; ++i) sum += std::exp(l[i] - max);
    nll += max + std::log(sum) - l[ids[static_cast<std::size_t>(p + 1)]];
  }
  *tokens = static_cast<std::uint64_t>(n - 1);
  return nll;
}

TEST(Eval, NumbersMatchAnIndependentComputation) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
  const std::string story = "Once upon a time, there was a little dog named Max. Max liked to run in the park.";
  const std::string path = test::temp_dir() + "/text.txt";
  test::write_file(path, std::vector<unsigned char>(story.begin(), story.end()));
  const test::CommandResult r = run_pocketlm({"eval", test::model_path("stories260K.bin"), path, "-z",
                                              test::model_path("tok512.bin"), "--split", "all"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::uint64_t tokens = 0;
  const double nll = independent_nll(story, &tokens);
  EXPECT_EQ(field(r.out, "tokens         "), static_cast<double>(tokens)) << r.out;
  EXPECT_NEAR(field(r.out, "cross-entropy  "), nll / tokens, 1e-5) << r.out;
  EXPECT_NEAR(field(r.out, "perplexity     "), std::exp(nll / tokens), 1e-4) << r.out;
  EXPECT_NEAR(field(r.out, "bits per byte  "), nll / std::log(2.0) / story.size(), 1e-5) << r.out;
}

TEST(Eval, WindowsScoreEveryTokenOnceAndAModelAgreesWithItself) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
  const std::string dir = test::temp_dir();
  const std::string model = dir + "/m.gguf";
  ASSERT_EQ(run_pocketlm({"convert", test::model_path("stories260K.bin"), "--to", "gguf", "-z",
                          test::model_path("tok512.bin"), "-o", model}).exit_code, 0);
  const std::string text = "A long story. " + std::string(40, 'a') + "\n<|endoftext|>\nA short one.\n";
  test::write_file(dir + "/t.txt", std::vector<unsigned char>(text.begin(), text.end()));
  const test::CommandResult r = run_pocketlm({"eval", model, dir + "/t.txt", "--split", "all", "--seq-len", "16",
                                              "--stride", "5", "--against", test::model_path("stories260K.bin"), "-z",
                                              test::model_path("tok512.bin")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // Every token after BOS once, whatever the windows.
  const test::CommandResult whole = run_pocketlm({"eval", model, dir + "/t.txt", "--split", "all"});
  ASSERT_EQ(whole.exit_code, 0) << whole.err;
  EXPECT_EQ(field(r.out, "tokens         "), field(whole.out, "tokens         ")) << r.out << whole.out;
  EXPECT_GT(field(r.out, "scored, in "), 2.0) << r.out;  // several windows
  // The GGUF f32 conversion and the .bin compute the same logits.
  EXPECT_EQ(field(r.out, "mean KL        "), 0.0) << r.out;
  EXPECT_EQ(field(r.out, "top-1 agree    "), 100.0) << r.out;
  // Shorter windows lose context: the cross-entropy can only be measured, not equal.
  EXPECT_NE(field(r.out, "cross-entropy  "), field(whole.out, "cross-entropy  "));
}

TEST(Eval, BadInputIsOneLine) {
  const test::CommandResult r = run_pocketlm({"eval", test::model_path("stories260K.bin"), "/nonexistent.txt", "-z",
                                              test::model_path("tok512.bin")});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "pocketlm: error: /nonexistent.txt: cannot open text file: No such file or directory\n");
  const test::CommandResult v = run_pocketlm({"eval", test::model_path("stories260K.bin"), "/dev/null", "--against",
                                              test::model_path("stories260K.bin"), "-z", test::model_path("tok512.bin"),
                                              "--split", "bogus"});
  EXPECT_EQ(v.exit_code, 1);
  EXPECT_EQ(v.err, "pocketlm: error: --split: 'bogus' is not heldout or all\n");
}

void expect_one_line_error(const test::CommandResult& r, const std::vector<std::string>& needles) {
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.err.rfind("pocketlm: error: ", 0), 0u) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  for (const std::string& n : needles) EXPECT_NE(r.err.find(n), std::string::npos) << "missing '" << n << "': " << r.err;
  EXPECT_EQ(r.out, "");
}

std::vector<std::string> eval_args(const std::string& text, std::vector<std::string> extra = {}) {
  std::vector<std::string> args = {"eval", test::model_path("stories260K.bin"), text, "-z",
                                   test::model_path("tok512.bin")};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

// A directory as the text: an error naming it, not an uncaught exception (abort).
TEST(Eval, TextThatIsADirectoryIsOneLine) {
  const std::string dir = test::temp_dir();
  expect_one_line_error(run_pocketlm(eval_args(dir)), {dir, "text", "directory"});
}

// The text from stdin ("-") or a pipe (bash's <(...), /dev/stdin) scores as the file does.
TEST(Eval, TextFromStdinOrAPipe) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
  const std::string path = test::temp_dir() + "/story.txt";
  const std::string story = "Once upon a time, there was a little cat. The cat liked to play.\n";
  test::write_file(path, std::vector<unsigned char>(story.begin(), story.end()));
  const test::CommandResult file = run_pocketlm(eval_args(path));
  ASSERT_EQ(file.exit_code, 0) << file.err;
  const test::CommandResult dash = test::run_pocketlm_with_input(eval_args("-"), path);
  ASSERT_EQ(dash.exit_code, 0) << dash.err;
  EXPECT_EQ(field(dash.out, "cross-entropy"), field(file.out, "cross-entropy")) << dash.out;
  const std::string out = test::temp_dir() + "/out.txt";
  std::string cmd = "cat '" + path + "' | " + test::emulator_prefix() + "'" + test::pocketlm_binary() + "'";
  for (const std::string& a : eval_args("/dev/stdin")) cmd += " '" + a + "'";
  ASSERT_EQ(std::system((cmd + " > '" + out + "' 2>/dev/null").c_str()), 0) << cmd;
  EXPECT_EQ(field(test::read_text(out), "cross-entropy"), field(file.out, "cross-entropy"));
}

// Not text: a PNG, a model given where the text goes (the arguments swapped), a file with NUL
// bytes, bytes that are not UTF-8. Each is one line naming it; none is scored.
TEST(Eval, TextThatIsNotTextIsRefused) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
  const std::string dir = test::temp_dir();
  const std::string png = dir + "/picture.png", nul = dir + "/nul.txt", latin = dir + "/latin1.txt";
  std::vector<unsigned char> png_bytes = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
  png_bytes.resize(300, 7);
  test::write_file(png, png_bytes);
  test::write_file(nul, {'O', 'n', 'c', 'e', 0, 'u', 'p', 'o', 'n'});
  std::vector<unsigned char> l1;
  for (int i = 0; i < 50; ++i) l1.insert(l1.end(), {'c', 'a', 'f', 0xE9, ' '});  // Latin-1 e-acute
  test::write_file(latin, l1);
  expect_one_line_error(run_pocketlm(eval_args(png)), {png + ": this is a PNG image", "eval takes MODEL TEXTFILE"});
  const std::string gguf = test::stories260k_gguf();
  expect_one_line_error(run_pocketlm(eval_args(gguf)), {gguf + ": this is a GGUF v3 file", "eval takes MODEL TEXTFILE"});
  const std::string bin = test::model_path("stories260K.bin");
  expect_one_line_error(run_pocketlm(eval_args(bin)), {bin + ": not text: a NUL byte at offset", "MODEL TEXTFILE"});
  expect_one_line_error(run_pocketlm(eval_args(nul)), {nul + ": not text: a NUL byte at offset 4"});
  expect_one_line_error(run_pocketlm(eval_args(latin)), {latin + ": not UTF-8 text: 50 of its 250 bytes"});
}

// Four stories of one's own, none of them in the held-out 5 %: the default reads all of them;
// --split heldout says that it takes none and what reads them.
std::string four_stories() {
  std::string text;
  for (int i = 0; i < 4; ++i) {
    EXPECT_FALSE(cli::is_heldout_story(static_cast<std::uint64_t>(i))) << i;
    text += "The cat sat on the mat number " + std::to_string(i) + ".\n<|endoftext|>\n";
  }
  const std::string path = test::temp_dir() + "/mine.txt";
  test::write_file(path, std::vector<unsigned char>(text.begin(), text.end()));
  return path;
}

TEST(Eval, TheWholeFileIsReadByDefault) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
  const std::string path = four_stories();
  const test::CommandResult r = run_pocketlm(eval_args(path));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find(": all stories, 4 of 4 stories, "), std::string::npos) << r.out;
  expect_one_line_error(run_pocketlm(eval_args(path, {"--split", "heldout"})),
                        {path, "held-out split", "none of its 4 stories", "--split all"});
}

// One story, one window: "1 story", "1 window", not "1 stories", "1 windows".
TEST(Eval, CountsOfOneAreSingular) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
  const std::string path = test::temp_dir() + "/one.txt";
  test::write_file(path, {'H', 'i', '.'});
  const test::CommandResult r = run_pocketlm(eval_args(path));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find(", 1 of 1 story, 3 bytes\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" scored, in 1 window of up to 512 tokens, "), std::string::npos) << r.out;
}

TEST(Eval, StrideBeyondTheWindowIsRefused) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
  const std::string path = four_stories();
  expect_one_line_error(run_pocketlm(eval_args(path, {"--seq-len", "16", "--stride", "17"})),
                        {"--stride: 17", "window of 16 tokens"});
  EXPECT_EQ(run_pocketlm(eval_args(path, {"--seq-len", "16", "--stride", "16"})).exit_code, 0);
}

// tok512.bin with the piece of one id replaced (its record rewritten): the same vocabulary
// size, another tokenizer.
std::vector<unsigned char> tokenizer_with_piece(int id, const std::string& piece) {
  const std::vector<unsigned char> in = test::read_file(test::model_path("tok512.bin"));
  std::vector<unsigned char> out(in.begin(), in.begin() + 4);
  std::size_t at = 4;
  for (int i = 0; at + 8 <= in.size(); ++i) {
    std::int32_t len = 0;
    std::memcpy(&len, in.data() + at + 4, 4);
    out.insert(out.end(), in.begin() + static_cast<std::ptrdiff_t>(at), in.begin() + static_cast<std::ptrdiff_t>(at) + 4);
    const std::string p = i == id ? piece : std::string(in.begin() + static_cast<std::ptrdiff_t>(at) + 8,
                                                         in.begin() + static_cast<std::ptrdiff_t>(at) + 8 + len);
    test::put_i32(out, static_cast<std::int32_t>(p.size()));
    out.insert(out.end(), p.begin(), p.end());
    at += 8 + static_cast<std::size_t>(len);
  }
  return out;
}

TEST(Eval, AgainstAModelWithAnotherTokenizerIsRefused) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
  const std::string dir = test::temp_dir();
  test::write_file(dir + "/other.bin", tokenizer_with_piece(400, "qz\n"));
  for (const char* name : {"tok512.bin", "other.bin"}) {
    const std::string z = std::string(name) == "other.bin" ? dir + "/other.bin" : test::model_path(name);
    ASSERT_EQ(run_pocketlm({"convert", test::model_path("stories260K.bin"), "--to", "gguf", "-z", z, "-o",
                            dir + "/" + name + ".gguf"}).exit_code, 0);
  }
  const std::string path = four_stories();
  const std::string model = dir + "/tok512.bin.gguf", base = dir + "/other.bin.gguf";
  const test::CommandResult r = run_pocketlm({"eval", model, path, "--against", base});
  expect_one_line_error(r, {"--against " + base, "token 400 is 'qz\\n' there", "in " + model, "same tokenizer"});
  // The same tokenizer in both: KL 0.
  const test::CommandResult same = run_pocketlm({"eval", model, path, "--against", model});
  ASSERT_EQ(same.exit_code, 0) << same.err;
  EXPECT_EQ(field(same.out, "mean KL        "), 0.0) << same.out;
}

}  // namespace
}  // namespace pocketlm
