// The C API (src/pocketlm/api/pocketlm.h): the README's embedding example is examples/embed.c
// byte for byte and, compiled as C, writes the story the C++ Session writes; the plan as data is
// the Session's plan; bad input gets one-line errors naming the field.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "pocketlm/api/pocketlm.h"
#include "pocketlm/runtime/session.h"
#include "ports/posix/file_storage.h"
#include "test_support.h"

namespace pocketlm {
namespace {

const std::string kSource = POCKETLM_SOURCE_DIR;
const std::string kModel = kSource + "/assets/stories1M.gguf";

TEST(CApiExample, ReadmeBlockIsExamplesEmbedC) {
  const std::string readme = test::read_text(kSource + "/README.md");
  const std::string open = "```c\n";
  const std::size_t at = readme.find(open);
  ASSERT_NE(at, std::string::npos) << "README.md has no ```c block";
  const std::size_t begin = at + open.size();
  const std::size_t end = readme.find("```\n", begin);
  ASSERT_NE(end, std::string::npos);
  EXPECT_EQ(readme.substr(begin, end - begin), test::read_text(kSource + "/examples/embed.c"))
      << "README.md's C block must be examples/embed.c verbatim";
}

struct Collected {
  const Tokenizer* tokenizer;
  std::string text;
};

bool collect(std::int32_t prev, std::int32_t next, void* ctx) {
  Collected* c = static_cast<Collected*>(ctx);
  if (next == c->tokenizer->bos_id() || next == c->tokenizer->eos_id()) return true;  // the C API's empty piece
  const Piece p = c->tokenizer->decode(prev, next);
  c->text.append(reinterpret_cast<const char*>(p.data), p.size);
  return true;
}

TEST(CApiExample, WritesTheStoryTheSessionWrites) {
  const std::string command = test::emulator_prefix() + POCKETLM_EMBED_EXAMPLE + std::string(" ") + kModel;
  FILE* pipe = popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string out;
  char buf[4096];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) out.append(buf, n);
  ASSERT_EQ(pclose(pipe), 0) << out;

  // The same run through the C++ API: prompt, steps and sampler of examples/embed.c.
  FileStorage file;
  ASSERT_TRUE(file.open(kModel.c_str(), "model").ok());
  Session session;
  ASSERT_TRUE(session.open(file, nullptr, SessionOptions()).ok());
  std::vector<std::int32_t> ids(256);
  int count = 0;
  ASSERT_TRUE(session.encode("Once upon a time", 16, ids.data(), ids.size(), &count).ok());
  SamplerParams params;
  params.temperature = 0.8f;
  params.topp = 0.9f;
  params.seed = 42;
  Collected c{&session.tokenizer(), ""};
  ASSERT_TRUE(session.generate(ids.data(), count, 48, params, collect, &c, nullptr).ok());
  EXPECT_GT(out.size(), 40u);
  EXPECT_EQ(out, c.text);
}

int read_file_cb(void* ctx, std::uint64_t offset, void* dst, std::size_t bytes) {
  return static_cast<FileStorage*>(ctx)->read(offset, dst, bytes).ok() ? 0 : 7;
}

struct CApi : ::testing::Test {
  void SetUp() override {
    ASSERT_TRUE(file.open(kModel.c_str(), "model").ok());
    memory.resize(pocketlm_session_bytes() + 1);
    // An odd address: create aligns within the bytes it is given.
    ASSERT_EQ(pocketlm_create(memory.data() + 1, memory.size() - 1, &s), POCKETLM_OK) << pocketlm_last_error(nullptr);
    pocketlm_config_defaults(&config);
    config.model = {read_file_cb, &file, file.size(), "stories1M.gguf"};
  }
  void TearDown() override { pocketlm_close(s); }
  FileStorage file;
  std::vector<unsigned char> memory;
  pocketlm_session* s = nullptr;
  pocketlm_config config;
  pocketlm_memory_plan plan = {sizeof(pocketlm_memory_plan)};
};

pocketlm_sampler sampler_of(float temperature, float topp, std::uint64_t seed) {
  pocketlm_sampler p;
  pocketlm_sampler_defaults(&p);
  p.temperature = temperature;
  p.topp = topp;
  p.seed = seed;
  return p;
}

TEST_F(CApi, PlanIsTheSessionsPlanPerTier) {
  config.ram_tier_count = 2;
  config.ram_tiers[0] = {"sram", 200000};
  config.ram_tiers[1] = {"psram", 8u << 20};
  config.seq_len = 128;
  config.kernels = "tiled4";
  ASSERT_EQ(pocketlm_plan(s, &config, &plan), POCKETLM_OK) << pocketlm_last_error(s);
  ASSERT_EQ(plan.tier_count, 3);
  EXPECT_STREQ(plan.tiers[0].name, "sram");
  EXPECT_STREQ(plan.tiers[1].name, "psram");
  EXPECT_EQ(plan.tiers[2].storage, 1);
  EXPECT_EQ(plan.fits, 1);
  EXPECT_EQ(plan.seq_len, 128);
  EXPECT_LE(plan.tiers[0].bytes, 200000u);
  EXPECT_GT(plan.tiers[1].bytes, 0u);
  EXPECT_EQ(plan.ram_bytes, plan.tiers[0].bytes + plan.tiers[1].bytes);

  // Buffers of exactly the plan's bytes open it; the session's arena is those bytes.
  std::vector<unsigned char> b0(plan.tiers[0].bytes + 15), b1(plan.tiers[1].bytes + 15);
  config.tier_buffers[0] = b0.data();
  config.tier_buffer_bytes[0] = b0.size();
  config.tier_buffers[1] = b1.data();
  config.tier_buffer_bytes[1] = b1.size();
  ASSERT_EQ(pocketlm_open(s, &config), POCKETLM_OK) << pocketlm_last_error(s);
  EXPECT_EQ(pocketlm_seq_len(s), 128);
  EXPECT_EQ(pocketlm_vocab_size(s), 512);
  EXPECT_STREQ(pocketlm_last_error(s), "");

  std::size_t entries = 0;
  ASSERT_EQ(pocketlm_prompt_capacity(s, 5, &entries), POCKETLM_OK);
  std::vector<std::int32_t> ids(entries);
  int n = 0;
  ASSERT_EQ(pocketlm_encode(s, "Hello", 5, 1, ids.data(), ids.size(), &n), POCKETLM_OK) << pocketlm_last_error(s);
  const pocketlm_sampler greedy = sampler_of(0.0f, 0.9f, 1);
  pocketlm_stats stats = {sizeof stats};
  struct Stop {
    int calls = 0;
  } stop;
  auto cb = [](void* ctx, std::int32_t, const char*, std::size_t) -> int { return ++static_cast<Stop*>(ctx)->calls == 5; };
  ASSERT_EQ(pocketlm_generate(s, ids.data(), n, 100, &greedy, cb, &stop, &stats), POCKETLM_OK) << pocketlm_last_error(s);
  EXPECT_EQ(stop.calls, 5);  // a non-zero return stops the run
  EXPECT_EQ(stats.tokens, 5);
  EXPECT_EQ(stats.prompt_tokens, n);
}

TEST_F(CApi, PlanThatDoesNotFitNamesTheTier) {
  config.ram_tier_count = 1;
  config.ram_tiers[0] = {"heap", 100000};
  config.storage_capacity = 1000;  // the model file cannot be stored either
  EXPECT_EQ(pocketlm_plan(s, &config, &plan), POCKETLM_OUT_OF_MEMORY);
  EXPECT_EQ(plan.fits, 0);
  EXPECT_GT(plan.tier_count, 0);
  EXPECT_NE(std::string(pocketlm_last_error(s)).find("stories1M.gguf"), std::string::npos) << pocketlm_last_error(s);
}

TEST_F(CApi, BadInputIsAOneLineErrorNamingTheField) {
  struct Case {
    const char* why;
    void (*mutate)(pocketlm_config*);
    const char* expect;
  };
  const Case cases[] = {
      {"no read", [](pocketlm_config* c) { c->model.read = nullptr; }, "config.model.read: null"},
      {"empty", [](pocketlm_config* c) { c->model.size = 0; }, "config.model.size = 0"},
      {"tiers", [](pocketlm_config* c) { c->ram_tier_count = 4; }, "config.ram_tier_count = 4"},
      {"seq_len", [](pocketlm_config* c) { c->seq_len = -2; }, "config.seq_len = -2"},
      {"kernels", [](pocketlm_config* c) { c->kernels = "sse9"; }, "config.kernels = 'sse9'"},
      {"reserved", [](pocketlm_config* c) { c->storage_capacity = 10, c->storage_reserved = 10; },
       "config.storage_reserved = 10"},
      {"kv", [](pocketlm_config* c) { c->kv_type = "q4"; }, "config.kv_type = 'q4'"},
      {"batch", [](pocketlm_config* c) { c->prefill_batch = -1; }, "config.prefill_batch = -1"},
      {"threads", [](pocketlm_config* c) { c->parallel_for = [](void*, int, void (*)(void*, int), void*) {}; },
       "config.parallel_threads = 0"},
      {"size", [](pocketlm_config* c) { c->size = 0; }, "config->size = 0"},
  };
  for (const Case& k : cases) {
    SCOPED_TRACE(k.why);
    pocketlm_config c = config;
    k.mutate(&c);
    EXPECT_EQ(pocketlm_plan(s, &c, &plan), POCKETLM_INVALID_ARGUMENT);
    const std::string m = pocketlm_last_error(s);
    EXPECT_NE(m.find(k.expect), std::string::npos) << m;
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
  }
  EXPECT_EQ(pocketlm_plan(s, nullptr, &plan), POCKETLM_INVALID_ARGUMENT);
  EXPECT_STREQ(pocketlm_last_error(s), "config: null");
  // The engine's own checks name the C fields too.
  pocketlm_config c = config;
  c.seq_len = 100000;
  EXPECT_EQ(pocketlm_plan(s, &c, &plan), POCKETLM_INVALID_ARGUMENT);
  EXPECT_NE(std::string(pocketlm_last_error(s)).find("config.seq_len = 100000 is outside"), std::string::npos)
      << pocketlm_last_error(s);

  // Open needs a buffer for every tier the plan uses: the API allocates nothing.
  EXPECT_EQ(pocketlm_open(s, &config), POCKETLM_INVALID_ARGUMENT);
  EXPECT_NE(std::string(pocketlm_last_error(s)).find("config.tier_buffers[0] (ram): null"), std::string::npos)
      << pocketlm_last_error(s);
  std::int32_t ids[8] = {1};
  const pocketlm_sampler sampler = sampler_of(0.5f, 0.9f, 1);
  auto cb = [](void*, std::int32_t, const char*, std::size_t) { return 0; };
  EXPECT_EQ(pocketlm_generate(s, ids, 1, 4, &sampler, cb, nullptr, nullptr), POCKETLM_ERR_STATE);
  EXPECT_STREQ(pocketlm_last_error(s), "pocketlm_generate: the session is not open (pocketlm_open first)");
}

TEST_F(CApi, SamplerAndBufferErrors) {
  ASSERT_EQ(pocketlm_plan(s, &config, &plan), POCKETLM_OK);
  std::vector<unsigned char> small(plan.tiers[0].bytes / 2);
  config.tier_buffers[0] = small.data();
  config.tier_buffer_bytes[0] = small.size();
  EXPECT_EQ(pocketlm_open(s, &config), POCKETLM_OUT_OF_MEMORY);
  EXPECT_NE(std::string(pocketlm_last_error(s)).find("the buffer for tier ram"), std::string::npos)
      << pocketlm_last_error(s);
  // After a failed open only close is allowed.
  EXPECT_EQ(pocketlm_open(s, &config), POCKETLM_ERR_STATE);
  EXPECT_EQ(pocketlm_close(s), POCKETLM_OK);

  ASSERT_EQ(pocketlm_create(memory.data(), memory.size(), &s), POCKETLM_OK);
  std::vector<unsigned char> arena(plan.tiers[0].bytes + 15);
  config.tier_buffers[0] = arena.data();
  config.tier_buffer_bytes[0] = arena.size();
  ASSERT_EQ(pocketlm_open(s, &config), POCKETLM_OK) << pocketlm_last_error(s);
  EXPECT_EQ(pocketlm_open(s, &config), POCKETLM_ERR_STATE);
  std::int32_t ids[1] = {1};
  auto cb = [](void*, std::int32_t, const char*, std::size_t) { return 0; };
  const pocketlm_sampler bad[] = {sampler_of(-1.0f, 0.9f, 1), sampler_of(0.5f, NAN, 1), sampler_of(0.5f, 0.9f, 0),
                                  sampler_of(0.5f, 1.5f, 1)};
  const char* expect[] = {"sampler.temperature = -1", "sampler.topp = nan", "sampler.seed = 0", "sampler.topp = 1.5"};
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(pocketlm_generate(s, ids, 1, 4, &bad[i], cb, nullptr, nullptr), POCKETLM_INVALID_ARGUMENT);
    EXPECT_NE(std::string(pocketlm_last_error(s)).find(expect[i]), std::string::npos) << pocketlm_last_error(s);
  }
  int n = 0;
  std::int32_t few[2];
  EXPECT_NE(pocketlm_encode(s, "Once upon a time", 16, 1, few, 2, &n), POCKETLM_OK);
  // An error is the last call's only: the next good call clears it.
  EXPECT_NE(std::string(pocketlm_last_error(s)), "");
  EXPECT_EQ(pocketlm_seq_len(s), 256);
  std::int32_t more[256];
  EXPECT_EQ(pocketlm_encode(s, "Once upon a time", 16, 1, more, 256, &n), POCKETLM_OK);
  EXPECT_STREQ(pocketlm_last_error(s), "");
}

TEST(CApiCreate, MemoryTooSmallOrNull) {
  std::vector<unsigned char> memory(64);
  pocketlm_session* s = reinterpret_cast<pocketlm_session*>(&memory);
  EXPECT_EQ(pocketlm_create(memory.data(), memory.size(), &s), POCKETLM_OUT_OF_MEMORY);
  EXPECT_EQ(s, nullptr);
  EXPECT_NE(std::string(pocketlm_last_error(nullptr)).find("bytes = 64: a session needs"), std::string::npos)
      << pocketlm_last_error(nullptr);
  EXPECT_EQ(pocketlm_create(nullptr, 100000, &s), POCKETLM_INVALID_ARGUMENT);
  EXPECT_STREQ(pocketlm_last_error(nullptr), "pocketlm_create: memory: null");
}

}  // namespace
}  // namespace pocketlm
