// Where the tests' files come from (test_support.h): shared/ first, then the download cache
// for the public models, else a one-line reason to skip that names the file and its source.
// And the pins of tests/public-models.txt, by which scripts/get-models accepts a download,
// are the sha256 of shared/'s copies (the shared README says those are the public files).
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "test_support.h"

namespace pocketlm::test {
namespace {

// Sets an environment variable for one scope (unset when `value` is null), then restores it.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old, had_ = true;
    value ? ::setenv(name, value, 1) : ::unsetenv(name);
  }
  ~ScopedEnv() { had_ ? ::setenv(name_, old_.c_str(), 1) : ::unsetenv(name_); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::string old_;
  bool had_ = false;
};

void touch(const std::string& path) { write_file(path, {'x'}); }

// The first line `scripts/get-models --path NAME` prints (stdout or stderr), which is where
// the script finds NAME by its own rule, or why it does not; "" when it fails.
std::string script_path(const std::string& name, bool* found = nullptr) {
  const std::string cmd = "'" POCKETLM_GET_MODELS "' --path '" + name + "' 2>&1";
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) return "popen failed";
  char buf[4096] = {};
  std::string out = std::fgets(buf, sizeof buf, p) ? buf : "";
  const bool ok = ::pclose(p) == 0;
  if (found) *found = ok;
  if (!out.empty() && out.back() == '\n') out.pop_back();
  return ok || found ? out : "";
}

TEST(TestFiles, PinsAreTheSha256OfTheFilesThere) {
  int checked = 0;
  for (const char* name : {"stories260K.bin", "tok512.bin", "tokenizer.bin", "stories260K_q80.bin"}) {
    const std::string pin = pinned_sha256(name);
    ASSERT_EQ(pin.size(), 64u) << name << " has no pin in tests/public-models.txt";
    const std::string path = find_file(std::string("models/") + name);
    if (path.empty()) continue;
    EXPECT_EQ(sha256_of(path), pin) << path;
    ++checked;
  }
  if (checked == 0) GTEST_SKIP() << missing_file_reason("models/stories260K.bin");
}

TEST(TestFiles, SharedFirstThenTheCacheElseAReasonNamingTheSource) {
  const std::string root = temp_dir(), shared = root + "/shared", cache = root + "/cache";
  ::mkdir(shared.c_str(), 0755);
  ::mkdir((shared + "/models").c_str(), 0755);
  ::mkdir(cache.c_str(), 0755);
  ::mkdir((cache + "/data").c_str(), 0755);
  touch(shared + "/models/tok512.bin");
  touch(cache + "/tok512.bin");
  touch(cache + "/stories260K.bin");
  touch(cache + "/tinystories-5k.txt");  // not a public model: never taken from the cache
  touch(cache + "/data/tinystories-5k.txt");
  const ScopedEnv s("POCKETLM_SHARED", shared.c_str()), c("POCKETLM_CACHE", cache.c_str());

  EXPECT_EQ(find_file("models/tok512.bin"), shared + "/models/tok512.bin");
  EXPECT_EQ(find_file("models/stories260K.bin"), cache + "/stories260K.bin");
  EXPECT_EQ(model_path("stories260K.bin"), cache + "/stories260K.bin");
  EXPECT_EQ(find_file("models/tokenizer.bin"), "");
  EXPECT_EQ(model_path("tokenizer.bin"), shared + "/models/tokenizer.bin");  // where an error names it
  EXPECT_EQ(find_file("data/tinystories-5k.txt"), "");
  // scripts/get-models, which fills the cache, finds files by the same rule.
  EXPECT_EQ(script_path("tok512.bin"), shared + "/models/tok512.bin");
  EXPECT_EQ(script_path("stories260K.bin"), cache + "/stories260K.bin");
  EXPECT_EQ(script_path("tokenizer.bin"), "");

  const std::string tokenizer = missing_file_reason("models/tokenizer.bin");
  EXPECT_EQ(tokenizer.find('\n'), std::string::npos) << tokenizer;
  for (const std::string& part : {std::string("models/tokenizer.bin is missing"), shared + "/models", cache,
                                  std::string("scripts/get-models --tests"),
                                  std::string("https://raw.githubusercontent.com/karpathy/llama2.c/")})
    EXPECT_NE(tokenizer.find(part), std::string::npos) << "no '" << part << "' in: " << tokenizer;
  const std::string q80 = missing_file_reason("models/stories260K_q80.bin");
  EXPECT_NE(q80.find("from stories260K.bin with pocketlm convert --to q80"), std::string::npos) << q80;
  const std::string text = missing_file_reason("data/tinystories-5k.txt");
  EXPECT_NE(text.find("data/tinystories-5k.txt is missing: it is not public"), std::string::npos) << text;
  EXPECT_NE(text.find(shared), std::string::npos) << text;

  EXPECT_EQ(first_missing({"models/tok512.bin", "", "models/stories260K.bin"}), "");
  EXPECT_EQ(first_missing({"models/tok512.bin", "models/tokenizer.bin", "data/tinystories-5k.txt"}), tokenizer);
}

TEST(TestFiles, TheCacheIsXdgCacheHomesElseHomes) {
  const ScopedEnv c("POCKETLM_CACHE", nullptr), x("XDG_CACHE_HOME", "/xdg"), h("HOME", "/home/u");
  EXPECT_EQ(cache_dir(), "/xdg/pocketlm");
  const ScopedEnv no_xdg("XDG_CACHE_HOME", nullptr);
  EXPECT_EQ(cache_dir(), "/home/u/.cache/pocketlm");
  // The script agrees: its message names the cache it looked in.
  bool found = true;
  const std::string said = script_path("no-such-file", &found);
  EXPECT_FALSE(found);
  EXPECT_NE(said.find("nor in /home/u/.cache/pocketlm"), std::string::npos) << said;
}

}  // namespace
}  // namespace pocketlm::test
