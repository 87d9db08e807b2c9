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

}  // namespace
}  // namespace pocketlm
