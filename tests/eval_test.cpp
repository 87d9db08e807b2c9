// `pocketlm eval`: the held-out split, and the numbers it prints checked against an independent
// computation through the engine API (forward passes and a log-softmax in the test).
#include <gtest/gtest.h>

#include <cmath>
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
  EXPECT_EQ(held, 278u);  // the split README.md's eval table reports
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
  std::vector<std::int32_t> ids(story.size() + 3);
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
  EXPECT_EQ(r.err, "pocketlm: error: /nonexistent.txt: cannot open text file\n");
  const test::CommandResult v = run_pocketlm({"eval", test::model_path("stories260K.bin"), "/dev/null", "--against",
                                              test::model_path("stories260K.bin"), "-z", test::model_path("tok512.bin"),
                                              "--split", "bogus"});
  EXPECT_EQ(v.exit_code, 1);
  EXPECT_EQ(v.err, "pocketlm: error: --split: 'bogus' is not heldout or all\n");
}

}  // namespace
}  // namespace pocketlm
