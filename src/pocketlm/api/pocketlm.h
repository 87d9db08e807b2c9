/* pocketlm.h: the engine's C API, version 1 (C99 and C++). One session: a model read through the
 * caller's storage callbacks, living in the caller's memory (the session object and one buffer
 * per RAM tier), encoding text, generating tokens through a callback, chatting, or feeding
 * tokens for their logits. Nothing here allocates: the caller sizes every buffer from
 * pocketlm_session_bytes() and pocketlm_plan() first (a static array in firmware,
 * heap_caps_malloc on an ESP32, malloc on a host).
 *
 * The order of calls:
 *   pocketlm_create(memory)  ->  pocketlm_config_defaults(&config), fill it
 *   ->  pocketlm_plan(config, &plan)  ->  fill config.tier_buffers  ->  pocketlm_open(config)
 *   ->  pocketlm_encode / pocketlm_generate / pocketlm_chat_* / pocketlm_decode ...
 *   ->  pocketlm_close
 *
 * States: a session is created, then open (after a successful pocketlm_open), then closed. A
 * call in the wrong state returns POCKETLM_ERR_STATE: plan or open on an open session, a call that
 * needs an open session before open, anything but close after a failed open, any call after
 * close (close twice included), and a generate, decode or chat turn made from inside a token
 * callback of the same session.
 *
 * Growth: every struct the caller fills or receives starts with `size`, the sizeof the caller
 * was built with; the library reads and writes only that many bytes, and fields added by a later
 * minor version take their defaults for an older caller. Fill it with the *_defaults() call, or
 * set size = sizeof(struct) and zero the rest.
 *
 * Errors: every call returns a pocketlm_status (POCKETLM_OK = 0) and replaces the previous
 * call's message. The one-line message names the field and its value (e.g.
 * "config.ram_tiers[1].capacity = 0: ...") and is pocketlm_last_error(session); a call made
 * without a session (pocketlm_create with bad memory, a null session) keeps its message for the calling thread, pocketlm_last_error(NULL). Messages
 * stay valid until the next call on the same session (or thread). Bad input is an error, never a
 * crash. A failed storage read ends the call that met it; the next call reads again.
 *
 * Threads: a session is used by one thread at a time; two sessions on two threads are
 * independent. pocketlm_abort() may be called from any thread while the session lives.
 *
 * Console: pocketlm_console_* draw text into a 32-bit framebuffer (ui/console.h), for a
 * device's screen (the PSP's 480x272 with a 512-pixel stride). docs/c-api.md has the guide. */
#ifndef POCKETLM_API_POCKETLM_H
#define POCKETLM_API_POCKETLM_H

#include <stddef.h>
#include <stdint.h>

#define POCKETLM_VERSION_MAJOR 1
#define POCKETLM_VERSION_MINOR 0
#define POCKETLM_VERSION_PATCH 0
/* The version as one number: major * 10000 + minor * 100 + patch. */
#define POCKETLM_VERSION (POCKETLM_VERSION_MAJOR * 10000 + POCKETLM_VERSION_MINOR * 100 + POCKETLM_VERSION_PATCH)

/* Every exported symbol: the shared library exports these and nothing else. */
#if defined(__GNUC__) || defined(__clang__)
#define POCKETLM_API __attribute__((visibility("default")))
#else
#define POCKETLM_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef enum pocketlm_status {
  POCKETLM_OK = 0,
  POCKETLM_INVALID_ARGUMENT = 1, /* a field or argument out of range (the message names it) */
  POCKETLM_NOT_FOUND = 2,
  POCKETLM_IO_ERROR = 3,         /* a storage read failed or ran past the end */
  POCKETLM_BAD_FORMAT = 4,       /* the model or tokenizer bytes disagree with their format */
  POCKETLM_OUT_OF_MEMORY = 5,    /* the plan does not fit the tiers, or a buffer is too small */
  POCKETLM_UNSUPPORTED = 6,      /* a valid request this build does not implement */
  POCKETLM_ERR_STATE = 7,        /* a call the session's state does not allow (see States) */
  POCKETLM_ABORTED = 8           /* pocketlm_abort() stopped the call */
} pocketlm_status;

/* The library's version, POCKETLM_VERSION of the header it was built from (a caller may
 * compare it with the header it was built against: the same major is compatible). */
POCKETLM_API int pocketlm_version(void);

/* The most memory tiers a plan has: RAM tiers (at most POCKETLM_MAX_TIERS - 1), then the
 * storage tier that holds the model file. */
#define POCKETLM_MAX_TIERS 4
/* Every buffer the engine carves starts on this boundary (bytes). */
#define POCKETLM_ALIGNMENT 16

/* Where model (and tokenizer) bytes come from: a file, a flash partition, a memory region. */
typedef struct pocketlm_storage {
  /* Reads exactly `bytes` bytes at byte `offset` into dst; returns 0 on success, any other
   * value on failure (reported as POCKETLM_IO_ERROR naming the storage, offset and bytes).
   * The engine never asks past `size`, and reads at most 64 KiB per call. */
  int (*read)(void* ctx, uint64_t offset, void* dst, size_t bytes);
  void* ctx;        /* passed to read (a FILE*, a partition handle, ...) */
  uint64_t size;    /* total bytes */
  const char* name; /* for error messages (a path, "flash:model"), copied (up to 63 bytes);
                     * NULL = "<model>" / "<tokenizer>" */
} pocketlm_storage;

/* One RAM tier: a block of memory of the device, fastest first (an ESP32-S3's internal SRAM,
 * then its PSRAM; the PSP's heap). */
typedef struct pocketlm_ram_tier {
  const char* name;  /* up to 23 bytes shown in plans and errors; NULL = "ram" */
  uint64_t capacity; /* bytes this tier may give the session; 0 = unbounded */
} pocketlm_ram_tier;

/* Runs task(task_ctx, i) for every i in [0, n) and returns when all have finished, on as many
 * threads (or cores) as the caller has; the tasks never allocate and results do not depend on
 * how they are spread. */
typedef void (*pocketlm_parallel_fn)(void* ctx, int n, void (*task)(void* task_ctx, int i), void* task_ctx);

typedef struct pocketlm_config {
  uint32_t size;              /* sizeof(pocketlm_config) (pocketlm_config_defaults sets it) */
  pocketlm_storage model;     /* required: a llama2.c .bin or a GGUF file */
  pocketlm_storage tokenizer; /* tokenizer.bin; read == NULL takes the one a GGUF model carries */
  /* The RAM tiers, fastest first; 0 = one unbounded tier named "ram". */
  int ram_tier_count;
  pocketlm_ram_tier ram_tiers[POCKETLM_MAX_TIERS - 1];
  /* The storage medium that holds the model file (weights that do not fit the RAM tiers are
   * read from it per token): its capacity (0 = unbounded) and the bytes of it that are not the
   * model's (bootloader, app), both checked by the plan. NULL name = "storage". */
  const char* storage_name;
  uint64_t storage_capacity;
  uint64_t storage_reserved;
  /* The caller's buffer for each RAM tier (by index of ram_tiers), used by pocketlm_open:
   * each must hold the plan's tiers[i].bytes from a 16-byte aligned address (an unaligned
   * buffer needs up to 15 bytes more). Ignored by pocketlm_plan. */
  void* tier_buffers[POCKETLM_MAX_TIERS - 1];
  size_t tier_buffer_bytes[POCKETLM_MAX_TIERS - 1];
  int seq_len;         /* context in tokens; 0 = the model's */
  const char* kernels; /* "reference", "tiled4", "avx2", ...; NULL = this CPU's fastest */
  /* A monotonic clock in ticks (NULL = no timing), clock_ticks_per_second of them a second. */
  uint64_t (*clock)(void);
  uint64_t clock_ticks_per_second;
  const char* kv_type;        /* the kv cache's type: "f32" (NULL; llama2.c's, exact) or "f16" */
  int prefill_batch;          /* prompt tokens per batched pass: 0 = the plan's choice, 1 = off */
  size_t stream_block_bytes;  /* one buffer of weights read from storage; 0 = 256 KiB */
  /* Threads for matmul rows and attention heads: parallel_for with parallel_threads workers
   * (the calling thread included); NULL = the calling thread alone. The tokens do not change. */
  pocketlm_parallel_fn parallel_for;
  void* parallel_ctx;
  int parallel_threads;
  int chat; /* 1: carve the chat history and message buffer pocketlm_chat_* need */
  size_t chat_message_bytes; /* the longest chat message, in bytes (with chat; 0 = 1024) */
} pocketlm_config;

/* config = the defaults: size set, one unbounded RAM tier, the model's seq_len, this CPU's
 * kernels, f32 kv cache, no clock, no threads, no chat. Storage is left to fill. */
POCKETLM_API void pocketlm_config_defaults(pocketlm_config* config);

/* One tier of a plan. */
typedef struct pocketlm_plan_tier {
  char name[24];
  int storage;       /* 0: a RAM tier, whose buffer must hold `bytes`; 1: the storage medium */
  uint64_t bytes;    /* RAM: the session's bytes in this tier (its buffer's size, 16-byte
                      * aligned); storage: bytes of weights kept there and read per token or row */
  uint64_t capacity; /* the config's capacity; 0 = unbounded */
} pocketlm_plan_tier;

/* The memory plan: every RAM tier's bytes, computed from the model's header before anything
 * is allocated. The caller sets size = sizeof(pocketlm_memory_plan). */
typedef struct pocketlm_memory_plan {
  uint32_t size;
  int tier_count;                               /* RAM tiers, then the storage tier */
  pocketlm_plan_tier tiers[POCKETLM_MAX_TIERS];
  int fits;                                     /* 1 when every tier holds its part */
  uint64_t ram_bytes;                           /* sum of the RAM tiers' bytes */
  uint64_t storage_bytes_per_token;             /* weight bytes one token reads from storage */
  uint64_t model_file_bytes;                    /* config.model.size */
  int seq_len;                                  /* the context the session will have */
  int prefill_batch;                            /* prompt tokens per batched pass */
} pocketlm_memory_plan;


/* What a model file says, from its header alone (no session, nothing allocated). */
typedef struct pocketlm_model_info {
  uint32_t size;          /* sizeof(pocketlm_model_info), set by the caller */
  char architecture[24];  /* "llama", "pocketlm-ple", ... (GGUF general.architecture) */
  char format[32];        /* "llama2.c v0 (legacy fp32)", "llama2.c v2 (q80)", "GGUF v3" */
  int vocab_size;
  int seq_len;            /* the model's context */
  int dim, hidden_dim, n_layers, n_heads, n_kv_heads;
  int bos_id, eos_id;
  int has_tokenizer;      /* 1: the file carries a tokenizer pocketlm reads (config.tokenizer may be NULL) */
  uint64_t file_bytes;
} pocketlm_model_info;


typedef struct pocketlm_session pocketlm_session;

/* Bytes of memory a session object needs, alignment padding included (its arena is separate,
 * in the tier buffers). */
POCKETLM_API size_t pocketlm_session_bytes(void);

/* Makes a session object in memory[0..bytes) (any alignment; at least pocketlm_session_bytes(),
 * which includes the padding to a 16-byte boundary), which must stay put until pocketlm_close
 * returns (after it, the memory is the caller's again). *out receives the session. Errors
 * (message in pocketlm_last_error(NULL)): null memory or out, bytes too few. */
POCKETLM_API pocketlm_status pocketlm_create(void* memory, size_t bytes, pocketlm_session** out);

/* The header of `model` into *info (the caller sets info->size), before or after open; the
 * session's memory is the workspace (a header's tensor table does not fit a firmware's stack)
 * and nothing of it is kept. Errors: null pointers, a storage without read or size, a file that
 * is not a model pocketlm reads (named for what it is), a closed session. */
POCKETLM_API pocketlm_status pocketlm_inspect(pocketlm_session* session, const pocketlm_storage* model,
                                              pocketlm_model_info* info);

/* The memory plan for `config` (its buffers ignored) into *plan, reading only the model's
 * header (and the tokenizer's size), any number of times before open; the session's memory is
 * its workspace (a microcontroller's stack could not hold it). Returns POCKETLM_OUT_OF_MEMORY
 * with the plan filled (fits 0) when it does not fit the tiers, the message naming the tier,
 * what it needs and holds. Errors: a config field out of range, a bad header, an open session
 * (POCKETLM_ERR_STATE: plan before opening, or with another session). */
POCKETLM_API pocketlm_status pocketlm_plan(pocketlm_session* session, const pocketlm_config* config,
                                           pocketlm_memory_plan* plan);

/* Plans as pocketlm_plan, checks every tier's buffer against it (a RAM tier the plan uses needs
 * a non-null buffer: the API allocates nothing), then reads the tokenizer and the weights into
 * the buffers. Only a created session opens (POCKETLM_ERR_STATE otherwise); after a failed open
 * only pocketlm_close is allowed. After it the session makes no allocation. The config's
 * storages (their ctx and read callbacks) must stay valid while the session is open; the rest
 * of the config is copied. */
POCKETLM_API pocketlm_status pocketlm_open(pocketlm_session* session, const pocketlm_config* config);

/* Entries the `tokens` array of pocketlm_encode needs for a text of `len` bytes (the ids and
 * the merge's scratch). Error: a text that cannot fit the context. */
POCKETLM_API pocketlm_status pocketlm_prompt_capacity(pocketlm_session* session, size_t len, size_t* entries);

/* Encodes text[0..len) (UTF-8) into tokens[0..*n_tokens) (llama2.c's encode), with BOS first
 * when add_bos is 1. `capacity` entries of tokens, at least pocketlm_prompt_capacity(len).
 * Errors: not open, a text longer than the context, a capacity too small. */
POCKETLM_API pocketlm_status pocketlm_encode(pocketlm_session* session, const char* text, size_t len, int add_bos,
                                             int32_t* tokens, size_t capacity, int* n_tokens);

/* The text of `token` after `prev` (llama2.c's decode: a leading space dropped after BOS,
 * "<0x0A>"-style pieces as their byte) into *piece[0..*len) (not NUL-terminated), valid while
 * the session is open. Errors: not open, an id outside [0, vocab size). */
POCKETLM_API pocketlm_status pocketlm_token_to_piece(pocketlm_session* session, int32_t prev, int32_t token,
                                                     const char** piece, size_t* len);

typedef struct pocketlm_sampler {
  uint32_t size;     /* sizeof(pocketlm_sampler) (pocketlm_sampler_defaults sets it) */
  float temperature; /* >= 0; 0 = greedy (argmax) */
  float topp;        /* nucleus mass in [0, 1]; 0 or 1 = plain multinomial sampling */
  uint64_t seed;     /* random state; must not be 0 */
} pocketlm_sampler;

/* sampler = run.c's defaults: temperature 1, top-p 0.9, seed 1 (run.c takes the time). */
POCKETLM_API void pocketlm_sampler_defaults(pocketlm_sampler* sampler);

/* Called for each chosen next token, forced by the prompt or sampled, with its id and its text
 * after the token before it (pocketlm_token_to_piece). A sampled BOS or EOS that ends a run or
 * reply is reported with an empty piece. Return 0 to go on, non-zero to stop. */
typedef int (*pocketlm_token_fn)(void* ctx, int32_t token, const char* piece, size_t len);

/* Counts and timings of one pocketlm_generate (timings 0 without config.clock). The caller sets
 * size = sizeof(pocketlm_stats). */
typedef struct pocketlm_stats {
  uint32_t size;
  int tokens;                 /* on_token calls */
  int prompt_tokens;          /* n_prompt */
  int prefill_passes;         /* forward passes whose next token the prompt forced */
  int decode_passes;          /* tokens sampled (a final BOS included) */
  double prefill_seconds;     /* the prefill passes' time */
  double decode_seconds;      /* the decode passes' time */
  uint64_t storage_bytes;     /* weight bytes read from storage by the passes (0: all in RAM) */
  uint64_t storage_seeks;     /* storage reads that did not start where the one before ended */
  uint64_t prefill_storage_bytes; /* the prefill passes' part of storage_bytes */
  uint64_t prefill_storage_seeks; /* the prefill passes' part of storage_seeks */
} pocketlm_stats;

/* llama2.c's generation loop: feeds prompt[0] at position 0; the next token is the next prompt
 * token while the prompt lasts, else a sample; BOS ends the run, as do `steps` positions or a
 * non-zero return of on_token (not an error). steps in [1, seq_len]; n_prompt >= 1 with ids
 * in [0, vocab size). *stats (when not NULL) receives the counts. Allocates nothing. Errors: not
 * open, null prompt/sampler/on_token, a sampler field out of range, steps or ids out of range,
 * a failed storage read, pocketlm_abort (POCKETLM_ABORTED). It ends a chat conversation. */
POCKETLM_API pocketlm_status pocketlm_generate(pocketlm_session* session, const int32_t* prompt, int n_prompt,
                                               int steps, const pocketlm_sampler* sampler, pocketlm_token_fn on_token,
                                               void* ctx, pocketlm_stats* stats);

/* Feeds tokens[0..n) at positions pos..pos+n-1 (the kv cache keeps [0, pos) from earlier calls)
 * and points *logits at the last token's pocketlm_vocab_size() logits, valid until the next call
 * on the session: the caller's own sampling loop continues at pos + n. Errors: not open, n < 1,
 * positions outside the context, ids out of range, a failed read, pocketlm_abort. It ends a chat
 * conversation. */
POCKETLM_API pocketlm_status pocketlm_decode(pocketlm_session* session, const int32_t* tokens, int n, int pos,
                                             const float** logits);

/* ---- Chat: turns appended to the kv cache (config.chat = 1) ---- */

typedef struct pocketlm_chat_config {
  uint32_t size;             /* sizeof(pocketlm_chat_config) (pocketlm_chat_config_defaults) */
  pocketlm_sampler sampler;  /* for every turn */
  int max_reply;             /* tokens per reply; 0 = until EOS, BOS or a full context */
  const char* chat_template; /* "none" (NULL: messages as plain text) or "llama2" ([INST] ...) */
  const char* system_prompt; /* llama2 only: the first turn's <<SYS>> block; NULL = none */
} pocketlm_chat_config;

POCKETLM_API void pocketlm_chat_config_defaults(pocketlm_chat_config* chat);

/* Starts a conversation at position 0 (pocketlm chat's: the same template, reply reserve and
 * context-full policy, docs/chat-and-console.md). Errors: not open, the session opened without
 * config.chat, a sampler or template out of range, a system prompt longer than the message
 * buffer. The config is copied. */
POCKETLM_API pocketlm_status pocketlm_chat_begin(pocketlm_session* session, const pocketlm_chat_config* chat);

/* Counts of one turn; the caller sets size = sizeof(pocketlm_chat_stats). */
typedef struct pocketlm_chat_stats {
  uint32_t size;
  int input_tokens;     /* positions fed before the reply (the last reply's pending token + message) */
  int reply_tokens;     /* tokens sampled, an ending EOS/BOS included */
  int context_full;     /* 1: the context-full policy dropped old turns before this one */
  int dropped_tokens;   /* positions it dropped */
  int reprefill_tokens; /* kept positions it ran again */
  int reply_ended;      /* 1: the model sampled EOS or BOS */
  int reply_cut;        /* 1: the reply reached the end of the context */
  int position;         /* kv cache positions after the turn */
} pocketlm_chat_stats;

/* One turn: renders message[0..len) (UTF-8) with the template, encodes it (BOS first on the
 * first turn, and on every llama2 turn), makes room under the context-full policy, feeds it
 * and samples the reply, each reply token to on_token (NULL: none). A message that cannot fit
 * is refused (POCKETLM_INVALID_ARGUMENT, the conversation unchanged); a failed read or abort ends
 * the conversation (pocketlm_chat_begin starts a new one). */
POCKETLM_API pocketlm_status pocketlm_chat_turn(pocketlm_session* session, const char* message, size_t len,
                                                pocketlm_token_fn on_token, void* ctx, pocketlm_chat_stats* stats);

/* ---- About an open session (0 / -1 when not open) ---- */

POCKETLM_API int pocketlm_seq_len(const pocketlm_session* session);
POCKETLM_API int pocketlm_vocab_size(const pocketlm_session* session);
POCKETLM_API int32_t pocketlm_bos_id(const pocketlm_session* session);
POCKETLM_API int32_t pocketlm_eos_id(const pocketlm_session* session);

/* Asks the session's running (or next) generate, decode or chat turn to stop with
 * POCKETLM_ABORTED, between tokens or between weight blocks read from storage. Safe from any
 * thread while the session lives; the request is used up by the call it stops. */
POCKETLM_API void pocketlm_abort(pocketlm_session* session);

/* The one-line message of the last call on `session` ("" after a success); NULL: the calling
 * thread's last call that had no session. */
POCKETLM_API const char* pocketlm_last_error(const pocketlm_session* session);

/* Ends the session: its memory and the tier buffers are the caller's again once it returns.
 * Errors: a session already closed (POCKETLM_ERR_STATE), memory that holds no session. */
POCKETLM_API pocketlm_status pocketlm_close(pocketlm_session* session);

/* ---- Console: a character grid of 8x8 cells drawn into a 32-bit framebuffer ---- */

typedef struct pocketlm_console pocketlm_console;

/* Bytes of memory a console object needs, alignment padding included. */
POCKETLM_API size_t pocketlm_console_bytes(void);

/* Makes a console in memory[0..bytes) (any alignment, pocketlm_console_bytes()) over
 * pixels: width x height pixels (at least 8 x 8), `stride` pixels from one row to the next
 * (>= width; the PSP's is 512), each pixel written as given (the PSP's 8888 is 0xAABBGGRR),
 * and clears it to `background`. The grid is width / 8 columns by height / 8 rows. Errors (in
 * pocketlm_last_error(NULL)): null pointers, sizes out of range, memory too small. */
POCKETLM_API pocketlm_status pocketlm_console_create(void* memory, size_t bytes, uint32_t* pixels, int width,
                                                     int height, int stride, uint32_t background,
                                                     uint32_t foreground, pocketlm_console** out);
/* Draws UTF-8 text[0..len) (a character may be split across calls; '\n' starts a line; past
 * the last row the cursor wraps to the top, as the PSP's debug screen does). */
POCKETLM_API void pocketlm_console_write(pocketlm_console* console, const char* text, size_t len);
/* The colour of the cells written from now on. */
POCKETLM_API void pocketlm_console_set_color(pocketlm_console* console, uint32_t foreground);
/* Clears the screen and puts the cursor at the top left. */
POCKETLM_API void pocketlm_console_clear(pocketlm_console* console);
POCKETLM_API int pocketlm_console_columns(const pocketlm_console* console);
POCKETLM_API int pocketlm_console_rows(const pocketlm_console* console);

/* ---- Text ---- */

/* UTF-16LE (the PSP's on-screen keyboard's outtext, in[0..in_bytes): little-endian code units,
 * as that CPU stores them) to UTF-8 in out[0..capacity), NUL-terminated; *out_bytes (when not
 * NULL) receives the bytes before the NUL. A surrogate pair becomes one character, an unpaired
 * surrogate U+FFFD. Errors (in pocketlm_last_error(NULL)): null pointers, an odd in_bytes, out
 * too small (3 bytes per 2 input bytes and the NUL always suffice; the characters that fit are
 * kept, NUL-terminated). */
POCKETLM_API pocketlm_status pocketlm_utf16le_to_utf8(const void* in, size_t in_bytes, char* out, size_t capacity,
                                                      size_t* out_bytes);

#ifdef __cplusplus
}
#endif

#endif /* POCKETLM_API_POCKETLM_H */
