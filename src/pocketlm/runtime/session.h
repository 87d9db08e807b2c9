// Session: one model, its tokenizer and a sampler living in one arena, and the generation
// loop of llama2.c's run.c. Building a session plans every byte first (MemoryPlan), refuses
// to go over the budget before any weight byte is read, then makes one allocation (or uses
// the caller's buffer) and reads the files into it. generate() allocates nothing.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "pocketlm/base/parallel.h"
#include "pocketlm/format/model_spec.h"
#include "pocketlm/io/counting_storage.h"
#include "pocketlm/io/read_queue.h"
#include "pocketlm/io/storage.h"
#include "pocketlm/kernels/kernels.h"
#include "pocketlm/memory/arena.h"
#include "pocketlm/memory/memory_plan.h"
#include "pocketlm/model/model.h"
#include "pocketlm/model/model_kind.h"
#include "pocketlm/model/weight_placement.h"
#include "pocketlm/runtime/device_profile.h"
#include "pocketlm/runtime/planner.h"
#include "pocketlm/sampling/sampler.h"
#include "pocketlm/text/tokenizer.h"

namespace pocketlm {

inline constexpr const char* kIoChunkRegion = "io chunk";
inline constexpr const char* kChatHistoryRegion = "chat history";
inline constexpr const char* kChatTextRegion = "chat text";
// Most prompt tokens one batched prefill pass runs (SessionOptions::prefill_batch): each weight
// byte then serves up to this many tokens; the activations of 64 tokens of a stories15M-shaped
// model are about 0.7 MiB.
inline constexpr int kMaxPrefillBatch = 64;

struct SessionOptions;
// The backend a session with `options` runs: options.kernels, else the device profile's
// (tiled4 on the PSP and ESP32-S3: the plan must carve the layouts the device carves), else
// this CPU's fastest.
const Kernels& session_kernels(const SessionOptions& options);

// What the platform lends a session (ports/: posix, a PSP or ESP32 port). The engine itself
// has no threads, files or clocks.
struct SessionOptions {
  int seq_len = 0;                         // context (tokens); 0 = the model's seq_len
  const Kernels* kernels = nullptr;        // nullptr = the device's (DeviceProfile::kernels), else
                                           // default_kernels()
  Parallel* parallel = nullptr;            // workers for matmul rows and attention heads (not
                                           // owned; nullptr = the calling thread)
  // A monotonic clock in integer ticks, clock_ticks_per_second of them a second, for the
  // timings of GenerateStats; nullptr = no timing. Ticks, not seconds: a token's timestamps
  // stay integer arithmetic (a single-precision FPU does doubles in software), and the sums
  // become seconds once per call.
  std::uint64_t (*clock)() = nullptr;
  std::uint64_t clock_ticks_per_second = 1;
  const DeviceProfile* device = nullptr;   // memory tiers (runtime/device_profile.h); nullptr =
                                           // one RAM tier of budget_bytes and the model file
  ReadQueue* read_queue = nullptr;         // how weights kept in storage are read per token
                                           // (not owned; nullptr = inline reads)
  std::size_t stream_block_bytes = 256 * 1024;  // one streaming buffer
  KvType kv = KvType::kF32;                // f16 halves the KV cache; f32 is run.c's (exact)
  std::size_t io_chunk_bytes = 64 * 1024;  // largest single read from storage
  std::uint64_t budget_bytes = 0;          // first RAM tier's capacity (--heap); 0 = the device's
  std::uint64_t reserve_bytes = 0;         // of the first RAM tier, not for the arena (the
                                           // program itself when the budget bounds the process)
  // Firmware: the buffer of each RAM tier of the plan (by tier index: the device profile's
  // RAM tiers, fastest first; tier 0 alone without a device), used instead of allocating; a
  // null entry is allocated. Each must hold the plan's arena_bytes(tier) after alignment.
  void* tier_buffers[MemoryPlan::kMaxTiers] = {};
  std::size_t tier_buffer_bytes[MemoryPlan::kMaxTiers] = {};
  // The port's memory for a RAM tier the plan needs and tier_buffers leaves null, asked for once
  // the plan is made: a block of at least `bytes` (any alignment) that stays valid while the
  // session lives (the port owns and frees it), or nullptr to let the session allocate the tier
  // itself. The host port gives large tiers huge pages this way (ports/posix/huge_pages.h).
  void* (*tier_allocator)(void* ctx, int tier, std::size_t bytes) = nullptr;
  void* tier_allocator_ctx = nullptr;
  int prefill_batch = 0;                   // prompt tokens per prefill pass: 0 = the plan's
                                           // choice (kMaxPrefillBatch, or the most that fits
                                           // the RAM tiers), 1 = one token at a time as run.c
  bool chat = false;                       // carve the chat history (2 x seq_len int32: token ids
                                           // and turn starts) that chat_begin()/chat_turn() need
  // A flag another thread may set (non-zero) to stop generate(), decode() or chat_turn() with
  // kAborted: checked before every forward pass and between weight blocks read from storage.
  // The caller clears it. Not owned; nullptr = none.
  const std::atomic<int>* abort = nullptr;
  // With chat: bytes of one rendered message a front end without a heap (the C API) renders and
  // encodes in the arena (chat_text()): the text and its encoding scratch. 0 = none.
  std::size_t chat_text_bytes = 0;
};

// Counts and timings of one generate() call. A forward pass is "prefill" when its next
// token is forced by the prompt and "decode" when its next token is sampled.
struct GenerateStats {
  int prompt_tokens = 0;      // tokens of the encoded prompt, BOS included
  int prefill_passes = 0;
  int decode_passes = 0;      // = tokens sampled, a final BOS included
  // Sum over the decode passes of pos + 1: the kv cache positions their attention read (times
  // the plan's kv cache bytes / seq_len, the cache bytes decode read besides the weights).
  std::uint64_t decode_kv_positions = 0;
  double prefill_seconds = 0.0;
  double decode_seconds = 0.0;
  double first_token_seconds = 0.0;  // from the start to the first sampled token
  // Reads and bytes taken from the model storage by the forward passes (weights kept in
  // storage; 0 when every weight is resident).
  std::uint64_t storage_reads = 0;
  std::uint64_t storage_seeks = 0;  // reads not contiguous with the one before
  std::uint64_t storage_bytes = 0;
  std::uint64_t prefill_storage_bytes = 0;  // the part of storage_bytes the prefill passes read
  std::uint64_t prefill_storage_seeks = 0;  // the part of storage_seeks they made
  // run.c's "achieved tok/s": (passes - 1) / seconds since the end of the first pass.
  double achieved_tok_per_s = 0.0;

  double prefill_tok_per_s() const { return prefill_seconds > 0 ? prefill_passes / prefill_seconds : 0.0; }
  double decode_tok_per_s() const { return decode_seconds > 0 ? decode_passes / decode_seconds : 0.0; }
};

// What the context-full policy does before a chat turn (Session::chat_room).
struct ChatRoom {
  bool context_full = false;  // the policy runs
  int dropped_tokens = 0;     // positions dropped (oldest turns after the kept opening)
  int reprefill_tokens = 0;   // kept positions run again at new positions
  int first_kept_turn = 0;    // turns before it (except the opening) are dropped
};

// Counts and timings of one chat_turn().
struct ChatTurnStats {
  int input_tokens = 0;      // positions the turn fed before its reply: the previous reply's last
                             // token (sampled, not yet in the kv cache) + the message's tokens
  int prefill_blocks = 0;    // forward_batch() calls among them (each reads the weights once)
  int decode_passes = 0;     // tokens sampled for the reply, an ending EOS/BOS included
  int forward_passes = 0;    // positions run in this turn: input_tokens + decode_passes - 1 +
                             // reprefill_tokens (the reply's last token waits for the next turn)
  bool context_full = false; // the context-full policy ran before this turn
  int dropped_tokens = 0;    // positions it dropped (oldest turns)
  int reprefill_tokens = 0;  // kept positions it ran again at their new positions
  bool reply_ended = false;  // the model sampled EOS or BOS
  bool reply_cut = false;    // the reply stopped because the context is full
  int position = 0;          // positions in the kv cache after the turn
  double prefill_seconds = 0.0;
  double decode_seconds = 0.0;
};

// Called once per chosen next token (forced or sampled) with the token before it; a final
// BOS that ends the run is reported too. Return false to stop early.
using TokenCallback = bool (*)(std::int32_t prev, std::int32_t next, void* ctx);

class Session {
 public:
  Session() = default;
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Plans (runtime/planner.h: plan_session), checks the budget (kOutOfMemory, the plan left in
  // plan(), when over), then opens from that plan as below. A session opens once: a second
  // call is an error (kInvalidArgument), and after a failed open generate() refuses to run.
  Status open(Storage& model, Storage& tokenizer, const SessionOptions& options);
  // The same; a null `tokenizer` takes the one the model file carries (GGUF), an error when it
  // carries none pocketlm reads.
  Status open(Storage& model, Storage* tokenizer, const SessionOptions& options);
  // Opens from a plan made by plan_session() for these storages and options (its memory is
  // what is carved: nothing is planned again): checks that it fits (kOutOfMemory) and is for
  // storages of these sizes (kInvalidArgument), then allocates the arena (or checks that the
  // borrowed buffers hold it) and loads model and tokenizer.
  Status open(const SessionPlan& plan, Storage& model, Storage* tokenizer, const SessionOptions& options);

  // Entries the `tokens` buffer of encode() needs for a prompt of len bytes
  // (Tokenizer::encode_capacity). Refuses first, as encode() does, a prompt whose byte length
  // alone proves it cannot fit the context (Tokenizer::min_tokens), so that a huge prompt costs
  // neither a buffer nor an encoding.
  Status prompt_capacity(std::size_t len, std::size_t* entries) const;
  // Encodes a prompt with BOS (run.c: encode(prompt, bos=1, eos=0)). tokens must hold
  // prompt_capacity(len) entries. Error when the prompt is longer than the context.
  Status encode(const char* text, std::size_t len, std::int32_t* tokens, std::size_t capacity, int* n) const;

  // run.c's generation loop: feeds prompt[0] at pos 0; while pos < steps the next token is
  // the next prompt token while the prompt lasts, else a sample; BOS as next ends the run.
  // Prompt tokens whose next token is forced run in blocks of up to prefill_batch() tokens
  // (one read of the weights per block, no logits); the tokens are those of run.c either way.
  // steps must be in [1, seq_len]; prompt must be non-empty with ids in [0, vocab_size); the
  // session must be open.
  Status generate(const std::int32_t* prompt, int n_prompt, int steps, const SamplerParams& params,
                  TokenCallback on_token, void* ctx, GenerateStats* stats);
  // Runs tokens[0..n) at positions pos..pos+n-1 (all but the last through the batched prefill)
  // and points *logits at the last one's [vocab_size] logits, valid until the next call. The
  // kv cache keeps positions [0, pos) from earlier calls, so a caller feeding its own loop
  // continues at pos + n; like generate() it ends a chat conversation. Errors: n < 1, pos < 0,
  // pos + n > seq_len, an id outside [0, vocab_size), a failed read, the abort flag.
  Status decode(const std::int32_t* tokens, int n, int pos, const float** logits);

  // Chat: a conversation whose turns are appended to the kv cache; earlier turns are never run
  // again. Needs SessionOptions::chat. chat_begin() empties the conversation (position 0) and
  // configures the sampler once for all its turns (seed 0 is an error). generate() reuses the
  // kv cache, so it ends the conversation: chat_turn() then needs chat_begin() again.
  Status chat_begin(const SamplerParams& params);
  // One turn: feeds the previous reply's last sampled token (when there is one) and
  // message[0..n) at the current position (all but the last through the batched prefill, as
  // generate()), then samples the reply until EOS or BOS (reported, kept as the next turn's first
  // input), `max_reply` tokens (0 = no limit) or a full context; on_token sees every sampled token
  // (prev = the token before it) and may stop the reply by returning false.
  //
  // Context-full policy: when the input and a reply reserve of min(max_reply or seq_len,
  // seq_len / 4) tokens do not fit behind the current position, the oldest turns are dropped:
  // positions [0, chat_pinned()) (BOS and the first turn's opening: its input, at most seq_len / 4
  // tokens) stay in the kv cache untouched, then the newest whole turns that leave room for the
  // input and the reserve are moved up behind them and run again at their new positions (RoPE
  // depends on the position); everything between is dropped. stats say what was dropped and
  // re-run. When the reply reaches the end of the context it is cut (stats->reply_cut), and the
  // next turn makes room.
  //
  // Bounded input: a message whose input exceeds seq_len - chat_pinned() positions is refused
  // (kInvalidArgument, the conversation unchanged). Message ids must be in [0, vocab_size).
  // A failed read of weights kept in storage, or logits that are not finite, end the
  // conversation with that error (chat_begin() starts a new one).
  Status chat_turn(const std::int32_t* message, int n, int max_reply, TokenCallback on_token, void* ctx,
                   ChatTurnStats* stats);
  // Whether a conversation is going on (chat_begin() made one; generate(), decode() or an
  // error mid-turn ended it).
  bool chat_active() const { return chat_begun_; }
  // Positions in the kv cache (the next turn's input starts here, after the pending token).
  int chat_position() const { return chat_pos_; }
  // Turns held in the kv cache (dropped turns not counted; the first turn always is).
  int chat_turns() const { return chat_turns_; }
  // The token ids in the kv cache by position, [0, chat_position()).
  const std::int32_t* chat_tokens() const { return chat_tokens_; }
  // The last reply's last sampled token, fed first by the next turn; -1 when none.
  std::int32_t chat_pending() const { return chat_pending_; }
  // Positions the context-full policy never drops (0 before the first turn).
  int chat_pinned() const { return chat_pinned_; }
  // The most message tokens the next turn accepts (bounded input) when its reply may be
  // max_reply tokens (0: unbounded), after the policy makes room: seq_len less the pinned
  // opening, the pending token and the reply reserve, min(max_reply or seq_len, seq_len / 4).
  int chat_message_capacity(int max_reply) const;
  // What the context-full policy will do before a turn of an n-token message (for a notice
  // shown before the turn runs).
  ChatRoom chat_room(int n, int max_reply) const;
  // The arena's buffers for one message (SessionOptions::chat_text_bytes): text[0..text_bytes)
  // to render it into and tokens[0..token_entries) to encode it with (encode_capacity of
  // text_bytes). Null and 0 without them.
  char* chat_text(std::size_t* text_bytes) const {
    *text_bytes = chat_text_ ? chat_text_bytes_ : 0;
    return chat_text_;
  }
  std::int32_t* chat_text_tokens(std::size_t* token_entries) const {
    *token_entries = chat_text_tokens_ ? chat_text_token_entries_ : 0;
    return chat_text_tokens_;
  }

  bool ready() const { return ready_; }
  const ModelSpec& spec() const { return plan_.spec; }
  const WeightPlacement& placement() const { return plan_.placement; }
  const MemoryPlan& plan() const { return plan_.memory; }
  const Tokenizer& tokenizer() const { return tokenizer_; }
  // The sampler of the last generate(): its counts say how often the T -> 0 limit was taken.
  const Sampler& sampler() const { return sampler_; }
  Model& model() { return *model_; }
  const Kernels& kernels() const { return *kernels_; }
  int seq_len() const { return model_->seq_len(); }
  int threads() const { return parallel_ ? parallel_->workers() : 1; }
  // Prompt tokens per batched prefill pass (1: one at a time).
  int prefill_batch() const { return model_->prefill_batch(); }
  std::uint64_t arena_bytes() const { return arena_.used(); }
  // The session's memory: one block per RAM tier of plan() (Arena::base, capacity, used).
  const Arena& arena() const { return arena_; }
  // Reads and bytes taken from the model storage since open() began (header and weights;
  // counted by the storage layer).
  std::uint64_t model_reads() const { return model_reads_.reads(); }
  std::uint64_t model_bytes_read() const { return model_reads_.bytes(); }

 private:
  // Whether every logit is finite (a model whose weights overflow float gives NaN or inf).
  static bool logits_finite(const float* logits, int n);
  // chat_turn() without its cleanup after an error.
  Status run_chat_turn(const std::int32_t* message, int n, int max_reply, TokenCallback on_token, void* ctx,
                       ChatTurnStats* stats);
  // Runs tokens[0..count) at positions pos.. without logits (blocks of prefill_block(), then
  // single passes); counts forward_batch() calls into *blocks.
  Status run_positions(const std::int32_t* tokens, int count, int pos, int* blocks);
  // Tokens the next batched pass takes when `remaining` tokens without logits are left: up to
  // the plan's prefill batch; 0 (one pass per token) when batching is off or one is left.
  // generate() and run_positions() cut their prompts with it.
  int prefill_block(int remaining) const;
  // The context-full policy for an input of n_in positions and a reply reserve (runtime/chat.cpp):
  // what it does, and doing it.
  ChatRoom plan_room(int n_in, int reserve) const;
  Status make_room(const ChatRoom& room, ChatTurnStats* stats);


  Arena arena_;
  SessionPlan plan_;  // what open() carved (runtime/planner.h)
  alignas(16) unsigned char model_memory_[kModelObjectBytes];  // the model object (model/model_kind.h)
  Model* model_ = nullptr;
  CountingStorage model_reads_;
  Tokenizer tokenizer_;
  Sampler sampler_;
  const Kernels* kernels_ = nullptr;
  Parallel* parallel_ = nullptr;
  std::uint64_t (*clock_)() = nullptr;
  std::uint64_t clock_ticks_per_second_ = 1;
  // Seconds of `ticks` of clock_ (timing code: once per call, not per token).
  double seconds(std::uint64_t ticks) const {
    return static_cast<double>(ticks) / static_cast<double>(clock_ticks_per_second_);
  }
  // Chat (SessionOptions::chat): the ids in the kv cache by position, the start position of
  // each turn held, and the sampled token not yet fed.
  std::int32_t* chat_tokens_ = nullptr;
  std::int32_t* chat_starts_ = nullptr;
  int chat_pos_ = 0;
  int chat_turns_ = 0;
  int chat_pinned_ = 0;
  std::int32_t chat_pending_ = -1;  // -1: none
  char* chat_text_ = nullptr;  // SessionOptions::chat_text_bytes of them
  std::size_t chat_text_bytes_ = 0;
  std::int32_t* chat_text_tokens_ = nullptr;
  std::size_t chat_text_token_entries_ = 0;
  const std::atomic<int>* abort_ = nullptr;
  // kAborted when the abort flag is set (SessionOptions::abort), else ok.
  Status check_abort() const;
  // The start of every call that runs forward passes: an earlier call's read error forgotten.
  void begin_call() { model_->clear_status(); }
  bool chat_begun_ = false;
  bool opened_ = false;  // open() was called (it may have failed)
  bool ready_ = false;   // open() succeeded
  Status open_again(Storage& model);  // the error of a second open()
  // open() once plan_ is set: budget check, arena, carve, load.
  Status open_planned(Storage& model, Storage* tokenizer, const SessionOptions& options);
};

}  // namespace pocketlm
