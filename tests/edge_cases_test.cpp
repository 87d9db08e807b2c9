// Edges of the input space: a prompt of exactly seq_len tokens, steps at exactly seq_len,
// invalid UTF-8 in the prompt, and a disk that fills up while `convert` writes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "ports/posix/file_storage.h"
#include "pocketlm/runtime/session.h"
#include "test_support.h"

namespace pocketlm {
namespace {

struct Stories260K {
  FileStorage model, tokenizer;
  Stories260K() {
    EXPECT_TRUE(model.open(test::model_path("stories260K.bin").c_str(), "model").ok());
    EXPECT_TRUE(tokenizer.open(test::model_path("tok512.bin").c_str(), "tokenizer").ok());
  }
};

int token_count(const char* text) {
  Stories260K f;
  Session s;
  EXPECT_TRUE(s.open(f.model, f.tokenizer, SessionOptions{}).ok());
  std::vector<std::int32_t> ids((std::string(text).size() + 3) * Tokenizer::kEncodeWordsPerSlot);
  int n = 0;
  EXPECT_TRUE(s.encode(text, std::string(text).size(), ids.data(), ids.size(), &n).ok());
  return n;
}

TEST(EdgeCases, PromptOfExactlySeqLenTokensFitsAndOneMoreDoesNot) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
  const char* text = "Once upon a time, there was a little girl";
  const int n = token_count(text);
  ASSERT_GT(n, 3);
  for (int seq_len : {n, n - 1}) {
    Stories260K f;
    SessionOptions options;
    options.seq_len = seq_len;
    Session s;
    ASSERT_TRUE(s.open(f.model, f.tokenizer, options).ok());
    std::vector<std::int32_t> ids(512);
    int got = 0;
    const Status st = s.encode(text, std::string(text).size(), ids.data(), ids.size(), &got);
    if (seq_len == n) {
      ASSERT_TRUE(st.ok()) << st.message();
      // steps == seq_len: the whole context is used, forced prompt tokens to the last position.
      int passes = 0;
      auto count = [](std::int32_t, std::int32_t, void* ctx) {
        ++*static_cast<int*>(ctx);
        return true;
      };
      ASSERT_TRUE(s.generate(ids.data(), got, seq_len, SamplerParams{0.0f, 0.9f, 1}, count, &passes, nullptr).ok());
      EXPECT_EQ(passes, seq_len);
    } else {
      EXPECT_FALSE(st.ok());
      EXPECT_NE(std::string(st.message()).find(std::to_string(n) + " tokens"), std::string::npos) << st.message();
    }
  }
}

TEST(EdgeCases, StepsBeyondSeqLenAreRefusedByTheEngine) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
  Stories260K f;
  Session s;
  ASSERT_TRUE(s.open(f.model, f.tokenizer, SessionOptions{}).ok());
  const std::int32_t bos = 1;
  EXPECT_FALSE(s.generate(&bos, 1, 513, SamplerParams{}, nullptr, nullptr, nullptr).ok());
  EXPECT_FALSE(s.generate(&bos, 1, 0, SamplerParams{}, nullptr, nullptr, nullptr).ok());
  EXPECT_TRUE(s.generate(&bos, 1, 512, SamplerParams{0.0f, 0.9f, 1}, nullptr, nullptr, nullptr).ok());
}

TEST(EdgeCases, InvalidUtf8PromptFallsBackToBytes) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
  const std::string bad = "caf\xC3 \xFF\xFE end \xED\xA0\x80";
  const auto r = test::run_pocketlm({"run", test::model_path("stories260K.bin"), "-z", test::model_path("tok512.bin"),
                                     "-t", "0", "-n", "40", "-i", bad});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  // Bytes that are not UTF-8 are printed as U+FFFD, never raw.
  EXPECT_EQ(r.out.find('\xFF'), std::string::npos);
  EXPECT_NE(r.out.find("\xEF\xBF\xBD"), std::string::npos) << r.out;
}

TEST(EdgeCases, ConvertOnAFullDiskFailsAndLeavesNothing) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
  const std::string dir = test::temp_dir();
  const std::string out = dir + "/q80.bin";
  // ulimit -f 64: files may grow to 64 blocks (32 KiB with 512-byte blocks) and no further.
  const std::string cmd = "ulimit -f 64; exec " + test::emulator_prefix() + "'" + test::pocketlm_binary() + "' convert '" +
                          test::model_path("stories260K.bin") + "' --to q80 -o '" + out + "' 2>'" + dir + "/err'";
  const int status = std::system(("/bin/sh -c \"" + cmd + "\"").c_str());
  EXPECT_NE(status, 0);
  const auto err = test::read_file(dir + "/err");
  const std::string message(err.begin(), err.end());
  EXPECT_NE(message.find("-o"), std::string::npos) << message;
  EXPECT_NE(message.find(out), std::string::npos) << message;
  EXPECT_EQ(std::count(message.begin(), message.end(), '\n'), 1) << message;
  // Neither the output nor its temporary file is left behind.
  const std::string listing = dir + "/listing";
  ASSERT_EQ(std::system(("ls -A '" + dir + "' | grep -v -e '^err$' -e '^listing$' > '" + listing + "'").c_str()) >= 0,
            true);
  EXPECT_TRUE(test::read_file(listing).empty()) << std::string(test::read_file(listing).begin(),
                                                               test::read_file(listing).end());
}

}  // namespace
}  // namespace pocketlm
