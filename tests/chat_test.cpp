// Session's chat: turns appended to the kv cache (never re-run), the same tokens as one pass
// over the whole conversation, the context-full policy, and bounded input (runtime/session.h).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "pocketlm/runtime/session.h"
#include "ports/posix/file_storage.h"
#include "test_support.h"

namespace pocketlm {
namespace {

struct ChatFixture {
  FileStorage model, tokenizer;
  Session session;
  explicit ChatFixture(int seq_len = 0) {
    EXPECT_TRUE(model.open(test::model_path("stories260K.bin").c_str(), "model").ok());
    EXPECT_TRUE(tokenizer.open(test::model_path("tok512.bin").c_str(), "tokenizer").ok());
    SessionOptions options;
    options.chat = true;
    options.seq_len = seq_len;
    const Status st = session.open(model, tokenizer, options);
    EXPECT_TRUE(st.ok()) << st.message();
  }
  std::vector<std::int32_t> encode(const std::string& text, bool bos) {
    std::vector<std::int32_t> t((text.size() + 3) * Tokenizer::kEncodeWordsPerSlot);
    int n = 0;
    EXPECT_TRUE(session.tokenizer().encode(text.c_str(), text.size(), bos, false, t.data(), t.size(), &n).ok());
    t.resize(static_cast<std::size_t>(n));
    return t;
  }
};

SamplerParams greedy() {
  SamplerParams p;
  p.temperature = 0.0f;
  p.seed = 1;
  return p;
}

bool collect(std::int32_t /*prev*/, std::int32_t next, void* ctx) {
  static_cast<std::vector<std::int32_t>*>(ctx)->push_back(next);
  return true;
}

struct Turn {
  std::vector<std::int32_t> message, reply;
  ChatTurnStats stats;
};

Turn run_turn(ChatFixture& f, const std::vector<std::int32_t>& message, int max_reply) {
  Turn t;
  t.message = message;
  const Status st = f.session.chat_turn(message.data(), static_cast<int>(message.size()), max_reply, collect, &t.reply,
                                        &t.stats);
  EXPECT_TRUE(st.ok()) << st.message();
  return t;
}

// The next tokens generate() chooses for `prompt` (greedy) over `steps` positions.
std::vector<std::int32_t> single_pass(ChatFixture& f, const std::vector<std::int32_t>& prompt, int steps) {
  std::vector<std::int32_t> next;
  const Status st = f.session.generate(prompt.data(), static_cast<int>(prompt.size()), steps, greedy(), collect, &next,
                                       nullptr);
  EXPECT_TRUE(st.ok()) << st.message();
  return next;
}

std::string text_of(const Session& s, std::int32_t prev, const std::vector<std::int32_t>& tokens) {
  std::string out;
  for (std::int32_t t : tokens) {
    const Piece p = s.tokenizer().decode(prev, t);
    out.append(reinterpret_cast<const char*>(p.data), p.size);
    prev = t;
  }
  return out;
}

constexpr int kReply = 24;

// Three turns of a story chat, greedy. Checked: (1) the kv cache is reused: each turn runs
// exactly its new tokens (the previous reply's last token, its message, its reply but the last
// token), so the positions run over the conversation equal its length, with no re-runs;
// (2) the result equals one pass: generate() over the concatenation M1 R1 M2 R2 M3 (replies
// forced, as a single prompt) samples exactly R3, and the text of R3 is the same; the first
// reply equals generate() over M1.
TEST(Chat, ThreeTurnsReuseTheKvCacheAndEqualOnePass) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
  ChatFixture f;
  ASSERT_TRUE(f.session.chat_begin(greedy()).ok());
  const std::vector<std::int32_t> m1 = f.encode("Once upon a time, there was a little girl named Lily", true);
  const std::vector<std::int32_t> m2 = f.encode("One day, she found a big red ball", false);
  const std::vector<std::int32_t> m3 = f.encode("Then her friend Tom came to play", false);
  Turn t[3] = {run_turn(f, m1, kReply), run_turn(f, m2, kReply), run_turn(f, m3, kReply)};

  int positions = 0, expected_position = 0;
  for (int i = 0; i < 3; ++i) {
    const ChatTurnStats& s = t[i].stats;
    ASSERT_FALSE(s.reply_ended) << "turn " << i << ": the test needs replies cut by the limit";
    ASSERT_EQ(s.decode_passes, kReply);
    EXPECT_FALSE(s.context_full);
    EXPECT_EQ(s.reprefill_tokens, 0);
    // New tokens: the pending token of the previous reply (turns 2, 3) and the message.
    EXPECT_EQ(s.input_tokens, static_cast<int>(t[i].message.size()) + (i > 0 ? 1 : 0));
    EXPECT_EQ(s.forward_passes, s.input_tokens + s.decode_passes - 1) << "turn " << i;
    positions += s.forward_passes;
    expected_position += s.forward_passes;
    EXPECT_EQ(s.position, expected_position);
  }
  EXPECT_EQ(positions, f.session.chat_position()) << "every position ran exactly once";
  EXPECT_EQ(f.session.chat_pending(), t[2].reply.back());
  EXPECT_GT(t[0].stats.prefill_blocks, 0) << "the message goes through the batched prefill";

  std::vector<std::int32_t> stream = m1;
  stream.insert(stream.end(), t[0].reply.begin(), t[0].reply.end());
  stream.insert(stream.end(), m2.begin(), m2.end());
  stream.insert(stream.end(), t[1].reply.begin(), t[1].reply.end());
  stream.insert(stream.end(), m3.begin(), m3.end());
  // The kv cache of the chat holds exactly that stream, then R3 but its last token.
  for (std::size_t i = 0; i < stream.size(); ++i) ASSERT_EQ(f.session.chat_tokens()[i], stream[i]) << i;

  const int steps = static_cast<int>(stream.size()) + kReply - 1;
  const std::vector<std::int32_t> next = single_pass(f, stream, steps);
  ASSERT_EQ(next.size(), static_cast<std::size_t>(steps));
  const std::vector<std::int32_t> sampled(next.end() - kReply, next.end());
  EXPECT_EQ(sampled, t[2].reply);
  EXPECT_EQ(text_of(f.session, stream.back(), sampled), text_of(f.session, stream.back(), t[2].reply));
  const std::vector<std::int32_t> first = single_pass(f, m1, static_cast<int>(m1.size()) + kReply - 1);
  EXPECT_EQ(std::vector<std::int32_t>(first.end() - kReply, first.end()), t[0].reply);
}

// The second turn's prefill runs its own tokens only: the same count and the same number of
// batched passes whether the first message was 12 tokens or 200.
TEST(Chat, SecondTurnPrefillDoesNotGrowWithTheFirstTurn) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
  std::string long_story;
  for (int i = 0; i < 12; ++i) long_story += "Once upon a time, there was a little girl who liked to play. ";
  ChatTurnStats second[2];
  int first_input[2] = {0, 0};
  const std::string firsts[2] = {"Once upon a time", long_story};
  for (int k = 0; k < 2; ++k) {
    ChatFixture f;
    ASSERT_TRUE(f.session.chat_begin(greedy()).ok());
    const Turn t1 = run_turn(f, f.encode(firsts[k], true), 8);
    first_input[k] = t1.stats.input_tokens;
    second[k] = run_turn(f, f.encode("The sun was shining and the birds were singing", false), 8).stats;
  }
  ASSERT_GT(first_input[1], 10 * first_input[0]);
  EXPECT_EQ(second[0].input_tokens, second[1].input_tokens);
  EXPECT_EQ(second[0].prefill_blocks, second[1].prefill_blocks);
  EXPECT_EQ(second[0].forward_passes, second[1].forward_passes);
  EXPECT_EQ(second[0].reprefill_tokens + second[1].reprefill_tokens, 0);
}

// A 64-token context: the policy keeps BOS and the first message's opening (at most 16
// positions) untouched, drops the oldest turns, re-runs the kept newest turns at their new
// positions, and the reply after it equals one pass over the kept tokens and the new message.
TEST(Chat, ContextFullDropsTheOldestTurnsAndKeepsTheOpening) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
  ChatFixture f(64);
  ASSERT_TRUE(f.session.chat_begin(greedy()).ok());
  const std::vector<std::int32_t> m1 = f.encode("Once upon a time, there was a little girl named Lily", true);
  run_turn(f, m1, 6);
  const int pinned = f.session.chat_pinned();
  EXPECT_EQ(pinned, std::min(static_cast<int>(m1.size()), 64 / 4));
  const std::vector<std::int32_t> opening(f.session.chat_tokens(), f.session.chat_tokens() + pinned);
  const char* more[] = {"She liked to play", "One day she saw a cat", "The cat was very happy",
                        "They played all day", "Then it was time to go home", "Lily said goodbye"};
  bool triggered = false;
  for (const char* m : more) {
    const std::vector<std::int32_t> msg = f.encode(m, false);
    const ChatRoom room = f.session.chat_room(static_cast<int>(msg.size()), 6);
    const Turn t = run_turn(f, msg, 6);
    EXPECT_EQ(room.context_full, t.stats.context_full);
    EXPECT_LE(t.stats.position, 64);
    if (!t.stats.context_full) continue;
    triggered = true;
    EXPECT_EQ(room.dropped_tokens, t.stats.dropped_tokens);
    EXPECT_EQ(room.reprefill_tokens, t.stats.reprefill_tokens);
    EXPECT_GT(t.stats.dropped_tokens, 0);
    EXPECT_GT(t.stats.reprefill_tokens, 0) << "the newest turns are kept and run again";
    EXPECT_EQ(t.stats.forward_passes, t.stats.reprefill_tokens + t.stats.input_tokens + t.stats.decode_passes - 1);
    for (int i = 0; i < pinned; ++i) EXPECT_EQ(f.session.chat_tokens()[i], opening[static_cast<std::size_t>(i)]);
    // One pass over what the kv cache holds before the reply gives the same reply.
    const int before_reply = t.stats.position - (t.stats.decode_passes - 1);
    const std::vector<std::int32_t> kept(f.session.chat_tokens(), f.session.chat_tokens() + before_reply);
    const std::vector<std::int32_t> next = single_pass(f, kept, before_reply + t.stats.decode_passes - 1);
    EXPECT_EQ(std::vector<std::int32_t>(next.end() - t.stats.decode_passes, next.end()), t.reply);
    break;
  }
  EXPECT_TRUE(triggered) << "the context never filled";
}

// A message longer than the context is refused and changes nothing.
TEST(Chat, MessageLongerThanTheContextIsRefused) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
  ChatFixture f(32);
  ASSERT_TRUE(f.session.chat_begin(greedy()).ok());
  std::string text;
  for (int i = 0; i < 10; ++i) text += "Once upon a time ";
  const std::vector<std::int32_t> m = f.encode(text, true);
  ASSERT_GT(m.size(), 32u);
  ChatTurnStats stats;
  const Status st = f.session.chat_turn(m.data(), static_cast<int>(m.size()), 4, nullptr, nullptr, &stats);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  // 32 positions less the reply reserve, min(4, 32 / 4).
  EXPECT_NE(std::string(st.message()).find("at most 28 fit"), std::string::npos) << st.message();
  EXPECT_EQ(f.session.chat_position(), 0);
  EXPECT_EQ(f.session.chat_turns(), 0);
  // A short one still works afterwards.
  const std::vector<std::int32_t> ok = f.encode("Once upon a time", true);
  EXPECT_TRUE(f.session.chat_turn(ok.data(), static_cast<int>(ok.size()), 4, nullptr, nullptr, &stats).ok());
  EXPECT_EQ(f.session.chat_turns(), 1);
}

// The first turn keeps the reply reserve too: a message that would leave the reply fewer than
// min(max_reply or seq_len, seq_len / 4) positions is refused, one that leaves exactly that many
// gets them.
TEST(Chat, TheFirstTurnKeepsTheReplyReserve) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
  ChatFixture f(64);
  ASSERT_TRUE(f.session.chat_begin(greedy()).ok());
  EXPECT_EQ(f.session.chat_message_capacity(0), 64 - 16);
  EXPECT_EQ(f.session.chat_message_capacity(5), 64 - 5);
  std::string text;
  for (int i = 0; i < 20; ++i) text += "Once upon a time ";
  std::vector<std::int32_t> m = f.encode(text, true);
  ASSERT_GT(m.size(), 49u);
  m.resize(49);
  ChatTurnStats stats;
  const Status st = f.session.chat_turn(m.data(), 49, 0, nullptr, nullptr, &stats);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(st.message()).find("at most 48 fit"), std::string::npos) << st.message();
  EXPECT_EQ(f.session.chat_turns(), 0);
  m.resize(48);
  const Turn t = run_turn(f, m, 0);
  EXPECT_FALSE(t.stats.reply_cut && t.stats.decode_passes < 16) << t.stats.decode_passes << " reply tokens";
  EXPECT_TRUE(t.stats.reply_ended || t.stats.decode_passes >= 16);
  EXPECT_LE(t.stats.position, 64);
}

// generate() overwrites the kv cache: the conversation must begin again.
TEST(Chat, GenerateEndsTheConversation) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
  ChatFixture f;
  ASSERT_TRUE(f.session.chat_begin(greedy()).ok());
  const std::vector<std::int32_t> m = f.encode("Once upon a time", true);
  run_turn(f, m, 4);
  single_pass(f, m, 8);
  ChatTurnStats stats;
  EXPECT_EQ(f.session.chat_turn(m.data(), static_cast<int>(m.size()), 4, nullptr, nullptr, &stats).code(),
            StatusCode::kInvalidArgument);
  ASSERT_TRUE(f.session.chat_begin(greedy()).ok());
  EXPECT_TRUE(f.session.chat_turn(m.data(), static_cast<int>(m.size()), 4, nullptr, nullptr, &stats).ok());
}

TEST(Chat, NeedsTheChatHistory) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
  FileStorage model, tokenizer;
  ASSERT_TRUE(model.open(test::model_path("stories260K.bin").c_str(), "model").ok());
  ASSERT_TRUE(tokenizer.open(test::model_path("tok512.bin").c_str(), "tokenizer").ok());
  Session s;
  ASSERT_TRUE(s.open(model, tokenizer, SessionOptions{}).ok());
  EXPECT_EQ(s.chat_begin(greedy()).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.plan().bytes_of(kChatHistoryRegion), 0u);
  ChatFixture f;
  EXPECT_EQ(f.session.plan().bytes_of(kChatHistoryRegion), 2u * 512u * 4u);
}

}  // namespace
}  // namespace pocketlm
