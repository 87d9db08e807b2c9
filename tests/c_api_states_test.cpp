// The C API v1 (src/pocketlm/api/pocketlm.h) under ordinary misuse, and what a port or binding
// needs: states (created -> open -> closed, each wrong call POCKETLM_ERR_STATE), re-entry from a
// callback, a failed read that ends one call only, the storage name copied, per-session and
// per-thread errors, abort, decode, token to piece, inspect, chat equal to `pocketlm chat`, and
// a caller built against an older, shorter struct.
#include <gtest/gtest.h>

#include <atomic>
#include <cstddef>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "pocketlm/api/pocketlm.h"
#include "ports/posix/file_storage.h"
#include "test_support.h"

namespace pocketlm {
namespace {

const std::string kModel = std::string(POCKETLM_SOURCE_DIR) + "/assets/stories1M.gguf";

// A file whose reads can be made to fail: from the read numbered fail_from on, fail_count reads.
struct FlakyFile {
  FileStorage file;
  std::atomic<int> reads{0};
  int fail_from = -1;
  int fail_count = 0;
};

int flaky_read(void* ctx, std::uint64_t offset, void* dst, std::size_t bytes) {
  FlakyFile* f = static_cast<FlakyFile*>(ctx);
  const int n = f->reads++;
  if (f->fail_from >= 0 && n >= f->fail_from && n < f->fail_from + f->fail_count) return 5;
  return f->file.read(offset, dst, bytes).ok() ? 0 : 7;
}

pocketlm_sampler greedy() {
  pocketlm_sampler p;
  pocketlm_sampler_defaults(&p);
  p.temperature = 0.0f;
  return p;
}

struct Tokens {
  std::vector<std::int32_t> ids;
  std::string text;
};

int collect(void* ctx, std::int32_t token, const char* piece, std::size_t len) {
  Tokens* t = static_cast<Tokens*>(ctx);
  t->ids.push_back(token);
  t->text.append(piece, len);
  return 0;
}

// One session over stories1M.gguf in owned buffers; `ram` > 0 bounds its one RAM tier, so that
// weights stay in storage and are read per token.
struct Opened {
  FlakyFile model;
  std::vector<unsigned char> memory, arena;
  pocketlm_config config;
  pocketlm_session* s = nullptr;

  explicit Opened(std::uint64_t ram = 0, int chat = 0, const char* name = "stories1M.gguf", int seq_len = 0) {
    EXPECT_TRUE(model.file.open(kModel.c_str(), "model").ok());
    memory.resize(pocketlm_session_bytes());
    EXPECT_EQ(pocketlm_create(memory.data(), memory.size(), &s), POCKETLM_OK);
    pocketlm_config_defaults(&config);
    config.model = {flaky_read, &model, model.file.size(), name};
    if (ram) {
      config.ram_tier_count = 1;
      config.ram_tiers[0] = {"ram", ram};
    }
    config.chat = chat;
    config.seq_len = seq_len;
    pocketlm_memory_plan plan = {sizeof plan};
    EXPECT_EQ(pocketlm_plan(s, &config, &plan), POCKETLM_OK) << pocketlm_last_error(s);
    arena.resize(plan.tiers[0].bytes + POCKETLM_ALIGNMENT);
    config.tier_buffers[0] = arena.data();
    config.tier_buffer_bytes[0] = arena.size();
    EXPECT_EQ(pocketlm_open(s, &config), POCKETLM_OK) << pocketlm_last_error(s);
  }
  ~Opened() { pocketlm_close(s); }

  // Greedy tokens after "Once upon a time".
  Tokens run(int steps, pocketlm_status* status = nullptr) {
    std::int32_t ids[256];
    int n = 0;
    EXPECT_EQ(pocketlm_encode(s, "Once upon a time", 16, 1, ids, 256, &n), POCKETLM_OK) << pocketlm_last_error(s);
    const pocketlm_sampler g = greedy();
    Tokens t;
    const pocketlm_status st = pocketlm_generate(s, ids, n, steps, &g, collect, &t, nullptr);
    if (status) *status = st;
    else EXPECT_EQ(st, POCKETLM_OK) << pocketlm_last_error(s);
    return t;
  }
};

TEST(CApiStates, VersionIsTheHeaders) {
  EXPECT_EQ(pocketlm_version(), POCKETLM_VERSION);
  EXPECT_EQ(POCKETLM_VERSION_MAJOR, 1);
}

TEST(CApiStates, CloseTwiceAndCallsAfterCloseAreStateErrors) {
  Opened o;
  ASSERT_EQ(pocketlm_close(o.s), POCKETLM_OK);
  EXPECT_EQ(pocketlm_close(o.s), POCKETLM_ERR_STATE);
  EXPECT_STREQ(pocketlm_last_error(o.s), "pocketlm_close: the session is already closed");
  std::int32_t ids[1] = {1};
  const pocketlm_sampler g = greedy();
  Tokens t;
  EXPECT_EQ(pocketlm_generate(o.s, ids, 1, 4, &g, collect, &t, nullptr), POCKETLM_ERR_STATE);
  EXPECT_STREQ(pocketlm_last_error(o.s), "pocketlm_generate: the session is closed");
  EXPECT_TRUE(t.ids.empty());
  EXPECT_EQ(pocketlm_seq_len(o.s), 0);
  EXPECT_EQ(pocketlm_open(o.s, &o.config), POCKETLM_ERR_STATE);
  // ~Opened closes a third time: still only an error.
}

TEST(CApiStates, CallsBeforeOpenAndNotASession) {
  std::vector<unsigned char> memory(pocketlm_session_bytes());
  pocketlm_session* s = nullptr;
  ASSERT_EQ(pocketlm_create(memory.data(), memory.size(), &s), POCKETLM_OK);
  std::int32_t ids[4];
  int n = 0;
  EXPECT_EQ(pocketlm_encode(s, "a", 1, 1, ids, 4, &n), POCKETLM_ERR_STATE);
  const float* logits = nullptr;
  EXPECT_EQ(pocketlm_decode(s, ids, 1, 0, &logits), POCKETLM_ERR_STATE);
  EXPECT_EQ(pocketlm_close(s), POCKETLM_OK);
  // Memory that never held a session is named as such, not used.
  std::vector<unsigned char> junk(pocketlm_session_bytes(), 0xAB);
  EXPECT_EQ(pocketlm_close(reinterpret_cast<pocketlm_session*>(junk.data())), POCKETLM_INVALID_ARGUMENT);
  EXPECT_NE(std::string(pocketlm_last_error(nullptr)).find("holds no pocketlm session"), std::string::npos);
}

TEST(CApiStates, PlanOnAnOpenSessionIsRefusedAndChangesNothing) {
  Opened o;
  const Tokens before = o.run(24);
  // Another model's config: refused before anything of it is read or kept.
  FileStorage other;
  ASSERT_TRUE(other.open(kModel.c_str(), "other").ok());
  pocketlm_config c;
  pocketlm_config_defaults(&c);
  int other_reads = 0;
  c.model = {[](void* ctx, std::uint64_t, void*, std::size_t) { return ++*static_cast<int*>(ctx), 1; }, &other_reads,
             other.size(), "other.gguf"};
  pocketlm_memory_plan plan = {sizeof plan};
  EXPECT_EQ(pocketlm_plan(o.s, &c, &plan), POCKETLM_ERR_STATE);
  EXPECT_STREQ(pocketlm_last_error(o.s), "pocketlm_plan: the session is already open");
  EXPECT_EQ(other_reads, 0);
  EXPECT_EQ(o.run(24).ids, before.ids);
}

struct Reentry {
  pocketlm_session* s;
  pocketlm_status inner = POCKETLM_OK;
  std::string message;
  int calls = 0;
};

int reenter(void* ctx, std::int32_t, const char*, std::size_t) {
  Reentry* r = static_cast<Reentry*>(ctx);
  if (r->calls++ == 2) {
    std::int32_t ids[1] = {1};
    const pocketlm_sampler g = greedy();
    r->inner = pocketlm_generate(r->s, ids, 1, 4, &g, reenter, r, nullptr);
    r->message = pocketlm_last_error(r->s);
  }
  return 0;
}

TEST(CApiStates, AGenerateFromInsideTheCallbackIsRefused) {
  Opened o;
  const Tokens plain = o.run(16);
  Reentry r{o.s};
  std::int32_t ids[256];
  int n = 0;
  ASSERT_EQ(pocketlm_encode(o.s, "Once upon a time", 16, 1, ids, 256, &n), POCKETLM_OK);
  const pocketlm_sampler g = greedy();
  ASSERT_EQ(pocketlm_generate(o.s, ids, n, 16, &g, reenter, &r, nullptr), POCKETLM_OK) << pocketlm_last_error(o.s);
  EXPECT_EQ(r.inner, POCKETLM_ERR_STATE);
  EXPECT_EQ(r.message, "pocketlm_generate: called from inside this session's token callback");
  EXPECT_EQ(r.calls, static_cast<int>(plain.ids.size())) << "the outer run went on to its end";
}

TEST(CApiStates, AFailedReadEndsThatCallOnly) {
  // 3 MiB for a 4.8 MiB model: weights stream from the file every token.
  Opened o(3u << 20);
  const Tokens clean = o.run(24);
  o.model.fail_from = o.model.reads + 40;
  o.model.fail_count = 1;
  pocketlm_status st = POCKETLM_OK;
  o.run(24, &st);
  EXPECT_EQ(st, POCKETLM_IO_ERROR);
  const std::string message = pocketlm_last_error(o.s);
  EXPECT_NE(message.find("stories1M.gguf: read of"), std::string::npos) << message;
  EXPECT_NE(message.find("returned 5"), std::string::npos) << message;
  // The next call reads again and gives the clean run's tokens; its error is "" again.
  EXPECT_EQ(o.run(24).ids, clean.ids);
  EXPECT_STREQ(pocketlm_last_error(o.s), "");
}

TEST(CApiStates, TheStorageNameIsCopied) {
  std::string name = "flash:model-partition";
  Opened o(3u << 20, 0, name.c_str());
  name.assign(name.size(), 'x');  // the caller's string changes (or is freed)
  o.model.fail_from = o.model.reads;
  o.model.fail_count = 1000000;
  pocketlm_status st = POCKETLM_OK;
  o.run(8, &st);
  EXPECT_EQ(st, POCKETLM_IO_ERROR);
  EXPECT_NE(std::string(pocketlm_last_error(o.s)).find("flash:model-partition: read of"), std::string::npos)
      << pocketlm_last_error(o.s);
}

int abort_at_third(void* ctx, std::int32_t, const char*, std::size_t) {
  auto* o = static_cast<std::pair<pocketlm_session*, int>*>(ctx);
  if (++o->second == 3) pocketlm_abort(o->first);
  return 0;
}

TEST(CApiStates, AbortStopsTheCallAndIsUsedUp) {
  Opened o;
  std::int32_t ids[256];
  int n = 0;
  ASSERT_EQ(pocketlm_encode(o.s, "Once upon a time", 16, 1, ids, 256, &n), POCKETLM_OK);
  const pocketlm_sampler g = greedy();
  std::pair<pocketlm_session*, int> ctx{o.s, 0};
  EXPECT_EQ(pocketlm_generate(o.s, ids, n, 64, &g, abort_at_third, &ctx, nullptr), POCKETLM_ABORTED);
  // Checked before every forward pass: the prompt's batched block may report its last forced token.
  EXPECT_GE(ctx.second, 3);
  EXPECT_LE(ctx.second, n);
  EXPECT_NE(std::string(pocketlm_last_error(o.s)).find("aborted"), std::string::npos);
  EXPECT_EQ(o.run(8).ids.size(), 8u) << "the request was used up by the call it stopped";
}

TEST(CApiStates, AbortFromAnotherThreadStopsStreaming) {
  Opened o(3u << 20);
  std::atomic<bool> started{false};
  auto cb = [](void* ctx, std::int32_t, const char*, std::size_t) {
    static_cast<std::atomic<bool>*>(ctx)->store(true);
    return 0;
  };
  std::thread stopper([&] {
    while (!started.load()) std::this_thread::yield();
    pocketlm_abort(o.s);
  });
  std::int32_t ids[1] = {1};
  const pocketlm_sampler g = greedy();
  const pocketlm_status st = pocketlm_generate(o.s, ids, 1, 256, &g, cb, &started, nullptr);
  stopper.join();
  // The run may end first only by sampling BOS; the story model does not within 256 tokens here.
  EXPECT_EQ(st, POCKETLM_ABORTED) << pocketlm_last_error(o.s);
}

TEST(CApiStates, DecodeGivesTheLogitsGenerateSamples) {
  Opened o;
  const Tokens g = o.run(12);
  std::int32_t ids[256];
  int n = 0;
  ASSERT_EQ(pocketlm_encode(o.s, "Once upon a time", 16, 1, ids, 256, &n), POCKETLM_OK);
  const float* logits = nullptr;
  ASSERT_EQ(pocketlm_decode(o.s, ids, n, 0, &logits), POCKETLM_OK) << pocketlm_last_error(o.s);
  // The caller's own greedy loop: argmax, feed it at the next position.
  const int vocab = pocketlm_vocab_size(o.s);
  int pos = n;
  for (std::size_t k = static_cast<std::size_t>(n) - 1; k < g.ids.size(); ++k) {
    int best = 0;
    for (int i = 1; i < vocab; ++i)
      if (logits[i] > logits[best]) best = i;
    EXPECT_EQ(best, g.ids[k]) << "token " << k;
    const std::int32_t next = best;
    if (pos >= 12) break;
    ASSERT_EQ(pocketlm_decode(o.s, &next, 1, pos++, &logits), POCKETLM_OK);
  }
  const std::int32_t bad = 1;
  EXPECT_EQ(pocketlm_decode(o.s, &bad, 1, pocketlm_seq_len(o.s), &logits), POCKETLM_INVALID_ARGUMENT);
  EXPECT_NE(std::string(pocketlm_last_error(o.s)).find("outside the context"), std::string::npos);
}

TEST(CApiStates, PiecesIdsAndEncodeWithoutBos) {
  Opened o;
  EXPECT_EQ(pocketlm_bos_id(o.s), 1);
  EXPECT_EQ(pocketlm_eos_id(o.s), 2);
  std::int32_t with[256], without[256];
  int a = 0, b = 0;
  ASSERT_EQ(pocketlm_encode(o.s, "Once upon a time", 16, 1, with, 256, &a), POCKETLM_OK);
  ASSERT_EQ(pocketlm_encode(o.s, "Once upon a time", 16, 0, without, 256, &b), POCKETLM_OK);
  ASSERT_EQ(a, b + 1);
  EXPECT_EQ(with[0], 1);
  EXPECT_EQ(0, std::memcmp(with + 1, without, sizeof(std::int32_t) * static_cast<std::size_t>(b)));
  std::string text;
  std::int32_t prev = 1;
  for (int i = 0; i < b; ++i) {
    const char* piece = nullptr;
    std::size_t len = 0;
    ASSERT_EQ(pocketlm_token_to_piece(o.s, prev, without[i], &piece, &len), POCKETLM_OK);
    text.append(piece, len);
    prev = without[i];
  }
  EXPECT_EQ(text, "Once upon a time");
  const char* piece = nullptr;
  std::size_t len = 0;
  EXPECT_EQ(pocketlm_token_to_piece(o.s, 1, 512, &piece, &len), POCKETLM_INVALID_ARGUMENT);
  EXPECT_STREQ(pocketlm_last_error(o.s), "pocketlm_token_to_piece: token = 512 is outside [0, 512)");
}

TEST(CApiStates, InspectReadsTheHeaderBeforeOpen) {
  FileStorage file;
  ASSERT_TRUE(file.open(kModel.c_str(), "model").ok());
  const pocketlm_storage model = {[](void* ctx, std::uint64_t at, void* dst, std::size_t n) {
                                    return static_cast<FileStorage*>(ctx)->read(at, dst, n).ok() ? 0 : 1;
                                  },
                                  &file, file.size(), "stories1M.gguf"};
  std::vector<unsigned char> memory(pocketlm_session_bytes());
  pocketlm_session* s = nullptr;
  ASSERT_EQ(pocketlm_create(memory.data(), memory.size(), &s), POCKETLM_OK);
  pocketlm_model_info info = {sizeof info};
  ASSERT_EQ(pocketlm_inspect(s, &model, &info), POCKETLM_OK) << pocketlm_last_error(s);
  EXPECT_STREQ(info.architecture, "llama");
  EXPECT_STREQ(info.format, "GGUF v3");
  EXPECT_EQ(info.vocab_size, 512);
  EXPECT_EQ(info.seq_len, 256);
  EXPECT_EQ(info.dim, 128);
  EXPECT_EQ(info.n_layers, 5);
  EXPECT_EQ(info.n_kv_heads, 2);
  EXPECT_EQ(info.has_tokenizer, 1);
  EXPECT_EQ(info.file_bytes, file.size());
  const char text[] = "Entry not found";
  const pocketlm_storage page = {[](void* ctx, std::uint64_t at, void* dst, std::size_t n) {
                                   std::memcpy(dst, static_cast<const char*>(ctx) + at, n);
                                   return 0;
                                 },
                                 const_cast<char*>(text), sizeof text - 1, "m.bin"};
  EXPECT_EQ(pocketlm_inspect(s, &page, &info), POCKETLM_BAD_FORMAT);
  EXPECT_NE(std::string(pocketlm_last_error(s)).find("m.bin: this is a text file"), std::string::npos)
      << pocketlm_last_error(s);
  EXPECT_EQ(pocketlm_close(s), POCKETLM_OK);
  EXPECT_EQ(pocketlm_inspect(s, &model, &info), POCKETLM_ERR_STATE);
}

TEST(CApiStates, ErrorsArePerSessionAndPerThread) {
  Opened a, b;
  std::atomic<int> wrong{0};
  auto work = [&wrong](pocketlm_session* s, std::int32_t bad_id) {
    std::int32_t ids[1] = {bad_id};
    const pocketlm_sampler g = greedy();
    const std::string want = "prompt: token 0 = " + std::to_string(bad_id) + " is outside [0, 512)";
    for (int i = 0; i < 2000; ++i) {
      if (pocketlm_generate(s, ids, 1, 4, &g, collect, nullptr, nullptr) != POCKETLM_INVALID_ARGUMENT ||
          want != pocketlm_last_error(s))
        ++wrong;
      pocketlm_memory_plan plan = {sizeof plan};
      pocketlm_plan(nullptr, nullptr, &plan);
      if (std::string(pocketlm_last_error(nullptr)) != "pocketlm_plan: session: null") ++wrong;
    }
  };
  std::thread t1(work, a.s, 600), t2(work, b.s, 700);
  t1.join();
  t2.join();
  EXPECT_EQ(wrong.load(), 0);
}

TEST(CApiStates, ACallerBuiltWithAShorterConfigStillWorks) {
  Opened full;
  pocketlm_memory_plan want = {sizeof want};
  // An older caller's config: every field up to chat_message_bytes, which it does not know.
  const std::size_t old_size = offsetof(pocketlm_config, chat_message_bytes);
  std::vector<unsigned char> old(old_size);  // exactly its bytes: a read past them is caught by ASan
  pocketlm_config c = full.config;
  c.chat = 0;
  std::memcpy(old.data(), &c, old_size);
  const std::uint32_t size = static_cast<std::uint32_t>(old_size);
  std::memcpy(old.data(), &size, sizeof size);
  std::vector<unsigned char> memory(pocketlm_session_bytes());
  pocketlm_session* s = nullptr;
  ASSERT_EQ(pocketlm_create(memory.data(), memory.size(), &s), POCKETLM_OK);
  pocketlm_memory_plan got = {sizeof got};
  ASSERT_EQ(pocketlm_plan(s, reinterpret_cast<const pocketlm_config*>(old.data()), &got), POCKETLM_OK)
      << pocketlm_last_error(s);
  ASSERT_EQ(pocketlm_close(s), POCKETLM_OK);
  ASSERT_EQ(pocketlm_create(memory.data(), memory.size(), &s), POCKETLM_OK);
  ASSERT_EQ(pocketlm_plan(s, &c, &want), POCKETLM_OK);
  EXPECT_EQ(got.ram_bytes, want.ram_bytes);
  EXPECT_EQ(got.tier_count, want.tier_count);
  // An older plan struct, without prefill_batch: written only as far as its size.
  std::vector<unsigned char> short_plan(offsetof(pocketlm_memory_plan, prefill_batch));
  const std::uint32_t plan_size = static_cast<std::uint32_t>(short_plan.size());
  std::memcpy(short_plan.data(), &plan_size, sizeof plan_size);
  EXPECT_EQ(pocketlm_plan(s, &c, reinterpret_cast<pocketlm_memory_plan*>(short_plan.data())), POCKETLM_OK);
  std::uint64_t ram = 0;
  std::memcpy(&ram, short_plan.data() + offsetof(pocketlm_memory_plan, ram_bytes), sizeof ram);
  EXPECT_EQ(ram, want.ram_bytes);
  EXPECT_EQ(pocketlm_close(s), POCKETLM_OK);
}

struct ChatReply {
  std::string text;
};

int chat_piece(void* ctx, std::int32_t, const char* piece, std::size_t len) {
  static_cast<ChatReply*>(ctx)->text.append(piece, len);
  return 0;
}

TEST(CApiStates, ChatTurnsArePocketlmChats) {
  // Enough turns in 64 positions that the context-full policy runs.
  const std::vector<std::string> messages = {"Once upon a time", "The dog ran home", "She saw a cat", "They played",
                                             "Then it was time to go home"};
  std::string input_text;
  for (const std::string& m : messages) input_text += m + "\n";
  const std::string input = test::temp_dir() + "/chat-in.txt";
  test::write_file(input, std::vector<unsigned char>(input_text.begin(), input_text.end()));
  const auto cli = test::run_pocketlm_with_input({"chat", kModel, "-t", "0", "-n", "24", "--seq-len", "64"}, input);
  ASSERT_EQ(cli.exit_code, 0) << cli.err;
  ASSERT_NE(cli.err.find("context full"), std::string::npos) << "the policy never ran: " << cli.err;

  Opened o(0, /*chat=*/1, "stories1M.gguf", /*seq_len=*/64);
  pocketlm_chat_config chat;
  pocketlm_chat_config_defaults(&chat);
  chat.sampler = greedy();
  chat.max_reply = 24;
  ASSERT_EQ(pocketlm_chat_begin(o.s, &chat), POCKETLM_OK) << pocketlm_last_error(o.s);
  std::string expected;
  bool dropped = false;
  for (const std::string& m : messages) {
    ChatReply reply;
    pocketlm_chat_stats stats = {sizeof stats};
    ASSERT_EQ(pocketlm_chat_turn(o.s, m.data(), m.size(), chat_piece, &reply, &stats), POCKETLM_OK)
        << pocketlm_last_error(o.s);
    dropped = dropped || stats.context_full;
    EXPECT_LE(stats.position, 64);
    expected += "User: " + m + "\nAssistant: " + reply.text + "\n";
  }
  EXPECT_TRUE(dropped);
  EXPECT_EQ(cli.out.substr(0, expected.size()), expected);

  // A message over config.chat_message_bytes, or one that cannot fit, is refused; the chat goes on.
  const std::string huge(2000, 'a');
  EXPECT_EQ(pocketlm_chat_turn(o.s, huge.data(), huge.size(), nullptr, nullptr, nullptr), POCKETLM_INVALID_ARGUMENT);
  EXPECT_NE(std::string(pocketlm_last_error(o.s)).find("config.chat_message_bytes = 1024"), std::string::npos);
  const std::string longer(400, 'a');
  EXPECT_EQ(pocketlm_chat_turn(o.s, longer.data(), longer.size(), nullptr, nullptr, nullptr), POCKETLM_INVALID_ARGUMENT);
  EXPECT_NE(std::string(pocketlm_last_error(o.s)).find("fit in the context of 64 tokens"), std::string::npos)
      << pocketlm_last_error(o.s);
  EXPECT_EQ(pocketlm_chat_turn(o.s, "The end", 7, nullptr, nullptr, nullptr), POCKETLM_OK) << pocketlm_last_error(o.s);
  // generate ends the conversation.
  o.run(8);
  EXPECT_EQ(pocketlm_chat_turn(o.s, "Hi", 2, nullptr, nullptr, nullptr), POCKETLM_ERR_STATE);
}

TEST(CApiStates, ChatNeedsTheChatConfig) {
  Opened o;
  pocketlm_chat_config chat;
  pocketlm_chat_config_defaults(&chat);
  EXPECT_EQ(pocketlm_chat_begin(o.s, &chat), POCKETLM_ERR_STATE);
  EXPECT_STREQ(pocketlm_last_error(o.s), "pocketlm_chat_begin: the session was opened without config.chat = 1");
  Opened c(0, 1);
  chat.chat_template = "chatml";
  EXPECT_EQ(pocketlm_chat_begin(c.s, &chat), POCKETLM_INVALID_ARGUMENT);
  EXPECT_NE(std::string(pocketlm_last_error(c.s)).find("chat.chat_template = 'chatml'"), std::string::npos);
  chat.chat_template = nullptr;
  chat.system_prompt = "You are a story teller.";
  EXPECT_EQ(pocketlm_chat_begin(c.s, &chat), POCKETLM_INVALID_ARGUMENT);
  chat.chat_template = "llama2";
  EXPECT_EQ(pocketlm_chat_begin(c.s, &chat), POCKETLM_OK) << pocketlm_last_error(c.s);
  EXPECT_EQ(pocketlm_chat_turn(c.s, "Hello", 5, nullptr, nullptr, nullptr), POCKETLM_OK) << pocketlm_last_error(c.s);
}

}  // namespace
}  // namespace pocketlm
