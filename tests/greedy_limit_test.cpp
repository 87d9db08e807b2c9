// Issue 9: a temperature so small that logits / T overflows (2e-38 on stories260K, whose
// logits reach ~10), or a subnormal one (1e-45), generates exactly the tokens of -t 0, with
// top-p or plain multinomial; run.c printed <unk> or one piece forever there (NaN softmax).
#include <gtest/gtest.h>

#include <set>
#include <vector>

#include "golden_models.h"
#include "ports/posix/file_storage.h"
#include "pocketlm/runtime/session.h"
#include "test_support.h"

namespace pocketlm {
namespace {

std::vector<int> generate(Session& s, float temperature, float topp) {
  const std::int32_t bos[1] = {kBosToken};
  std::vector<int> tokens;
  const Status st = s.generate(bos, 1, 30, SamplerParams{temperature, topp, 5}, test::collect_tokens, &tokens, nullptr);
  EXPECT_TRUE(st.ok()) << st.message();
  return tokens;
}

TEST(GreedyLimit, TinyTemperaturesGiveTheTokensOfTemperatureZero) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
  FileStorage model, tokenizer;
  ASSERT_TRUE(model.open(test::model_path("stories260K.bin").c_str(), "model").ok());
  ASSERT_TRUE(tokenizer.open(test::model_path("tok512.bin").c_str(), "tokenizer").ok());
  Session s;
  ASSERT_TRUE(s.open(model, tokenizer, SessionOptions{}).ok());
  const std::vector<int> greedy = generate(s, 0.0f, 0.9f);
  ASSERT_EQ(greedy.size(), 30u);
  EXPECT_GT(std::set<int>(greedy.begin(), greedy.end()).size(), 5u);  // a story, not one id repeated
  for (float t : {2e-38f, 1e-45f})
    for (float topp : {0.9f, 1.0f, 0.0f}) EXPECT_EQ(generate(s, t, topp), greedy) << "T " << t << " topp " << topp;
}

// Through the CLI as a user types it: the same text as -t 0, and one warning line that names
// what happened (run.c printed <unk> 30 times for the first, one piece forever for -p 1.0).
TEST(GreedyLimit, TheCliWarnsAndPrintsTheGreedyStory) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
  auto run = [](const std::string& t, const std::string& p) {
    return test::run_pocketlm({"run", test::model_path("stories260K.bin"), "-z", test::model_path("tok512.bin"), "-t",
                               t, "-p", p, "-n", "30", "-s", "5"});
  };
  const auto greedy = run("0", "0.9");
  ASSERT_EQ(greedy.exit_code, 0) << greedy.err;
  EXPECT_EQ(greedy.err.find("warning"), std::string::npos) << greedy.err;
  for (const char* p : {"0.9", "1.0"}) {
    const auto overflow = run("2e-38", p);
    EXPECT_EQ(overflow.exit_code, 0) << overflow.err;
    EXPECT_EQ(overflow.out, greedy.out) << "-t 2e-38 -p " << p;
    EXPECT_NE(overflow.err.find("warning: -t: logits / 2e-38 overflowed float at 30 of 30 sampled tokens"),
              std::string::npos) << overflow.err;
    const auto subnormal = run("1e-45", p);
    EXPECT_EQ(subnormal.exit_code, 0) << subnormal.err;
    EXPECT_EQ(subnormal.out, greedy.out) << "-t 1e-45 -p " << p;
    EXPECT_NE(subnormal.err.find("warning: -t: temperature 1e-45 is subnormal"), std::string::npos) << subnormal.err;
  }
}

}  // namespace
}  // namespace pocketlm
