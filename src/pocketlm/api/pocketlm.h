/* pocketlm.h: the engine's C API (C99 and C++). One session: a model read through the caller's
 * storage callbacks, living in the caller's memory (the session object and one buffer per RAM
 * tier), encoding text and generating tokens through a callback. Nothing here allocates: the
 * caller sizes every buffer from pocketlm_session_bytes() and pocketlm_plan() first (a static
 * array in firmware, heap_caps_malloc on an ESP32, malloc on a host).
 *
 * The order of calls:
 *   pocketlm_create(memory)  ->  pocketlm_plan(config)  ->  fill config.tier_buffers
 *   ->  pocketlm_open(config)  ->  pocketlm_encode / pocketlm_generate ...  ->  pocketlm_close
 *
 * Errors: every call returns a pocketlm_status (POCKETLM_OK = 0). The one-line message naming
 * the field and its value (e.g. "config.ram_tiers[1].capacity = 0: ...") is
 * pocketlm_last_error(session); a call made without a session (pocketlm_create with bad memory,
 * or a null session) leaves its message in pocketlm_last_error(NULL). Messages stay valid until
 * the next call on the same session. Bad input is an error, never a crash. A session is used by
 * one thread at a time.
 *
 * Console: pocketlm_console_* draw text into a 32-bit framebuffer (ui/console.h), for a
 * device's screen (the PSP's 480x272 with a 512-pixel stride). docs/c-api.md has the guide. */
#ifndef POCKETLM_API_POCKETLM_H
#define POCKETLM_API_POCKETLM_H

#include <stddef.h>
#include <stdint.h>

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
  POCKETLM_UNSUPPORTED = 6       /* a valid request this build does not implement */
} pocketlm_status;

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
  const char* name; /* for error messages (a path, "flash:model"); NULL = "<storage>" */
} pocketlm_storage;

/* One RAM tier: a block of memory of the device, fastest first (an ESP32-S3's internal SRAM,
 * then its PSRAM; the PSP's heap). */
typedef struct pocketlm_ram_tier {
  const char* name;  /* up to 23 bytes shown in plans and errors; NULL = "ram" */
  uint64_t capacity; /* bytes this tier may give the session; 0 = unbounded */
} pocketlm_ram_tier;

typedef struct pocketlm_config {
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
} pocketlm_config;

/* One tier of a plan. */
typedef struct pocketlm_plan_tier {
  char name[24];
  int storage;       /* 0: a RAM tier, whose buffer must hold `bytes`; 1: the storage medium */
  uint64_t bytes;    /* RAM: the session's bytes in this tier (its buffer's size, 16-byte
                      * aligned); storage: bytes of weights kept there and read per token or row */
  uint64_t capacity; /* the config's capacity; 0 = unbounded */
} pocketlm_plan_tier;

/* The memory plan: every RAM tier's bytes, computed from the model's header before anything
 * is allocated. */
typedef struct pocketlm_memory_plan {
  int tier_count;                               /* RAM tiers, then the storage tier */
  pocketlm_plan_tier tiers[POCKETLM_MAX_TIERS];
  int fits;                                     /* 1 when every tier holds its part */
  uint64_t ram_bytes;                           /* sum of the RAM tiers' bytes */
  uint64_t storage_bytes_per_token;             /* weight bytes one token reads from storage */
  uint64_t model_file_bytes;                    /* config.model.size */
  int seq_len;                                  /* the context the session will have */
} pocketlm_memory_plan;

typedef struct pocketlm_sampler {
  float temperature; /* >= 0; 0 = greedy (argmax) */
  float topp;        /* nucleus mass; <= 0 or >= 1 = plain multinomial sampling */
  uint64_t seed;     /* random state; must not be 0 */
} pocketlm_sampler;

/* Called for each chosen next token, forced by the prompt or sampled (a final BOS that ends the
 * run included), with its id and its text after the token before it (llama2.c's decode: raw
 * bytes, not NUL-terminated, `len` bytes; "<0x0A>"-style pieces are their byte). Return 0 to go
 * on, non-zero to stop. */
typedef int (*pocketlm_token_fn)(void* ctx, int32_t token, const char* piece, size_t len);

typedef struct pocketlm_session pocketlm_session;

/* Bytes of memory a session object needs, alignment padding included (about 30 KiB; its arena is
 * separate, in the tier buffers). */
size_t pocketlm_session_bytes(void);

/* Makes a session object in memory[0..bytes) (any alignment; at least pocketlm_session_bytes(),
 * which includes the padding to a 16-byte boundary), which must stay put until pocketlm_close.
 * *out receives the session. Errors (message in pocketlm_last_error(NULL)): null memory or
 * out, bytes too few. */
pocketlm_status pocketlm_create(void* memory, size_t bytes, pocketlm_session** out);

/* The memory plan for `config` (the buffers ignored) into *plan, reading only the model's
 * header (and the tokenizer's size). Returns POCKETLM_OUT_OF_MEMORY with the plan filled (fits
 * 0) when it does not fit the tiers, the message naming the tier, what it needs and holds.
 * Errors: a config field out of range, a bad header. May be called before open, any number of
 * times. */
pocketlm_status pocketlm_plan(pocketlm_session* session, const pocketlm_config* config, pocketlm_memory_plan* plan);

/* Plans as pocketlm_plan, checks every tier's buffer against it (a RAM tier the plan uses
 * needs a non-null buffer: the API allocates nothing), then reads the tokenizer and the weights
 * into the buffers. A session opens once: a second call is an error. After it the session
 * makes no allocation. After a failed open, close the session and create a new one. */
pocketlm_status pocketlm_open(pocketlm_session* session, const pocketlm_config* config);

/* Entries the `tokens` array of pocketlm_encode needs for a prompt of `len` bytes (the ids and
 * the merge's scratch). Error: a prompt that cannot fit the context. */
pocketlm_status pocketlm_prompt_capacity(const pocketlm_session* session, size_t len, size_t* entries);

/* Encodes text[0..len) (UTF-8) with BOS first (llama2.c's encode) into tokens[0..*n_tokens).
 * `capacity` entries of tokens, at least pocketlm_prompt_capacity(len). Errors: not open, a
 * prompt longer than the context, a capacity too small. */
pocketlm_status pocketlm_encode(const pocketlm_session* session, const char* text, size_t len, int32_t* tokens,
                                size_t capacity, int* n_tokens);

/* Counts and timings of one pocketlm_generate (timings 0 without config.clock). */
typedef struct pocketlm_stats {
  int tokens;                 /* on_token calls */
  int prompt_tokens;          /* n_prompt */
  int prefill_passes;         /* forward passes whose next token the prompt forced (a batched
                               * prefill pass counts once) */
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
 * open, null prompt/sampler/on_token, a sampler field out of range (temperature < 0 or not
 * finite, topp NaN, seed 0), steps or ids out of range, a failed storage read. */
pocketlm_status pocketlm_generate(pocketlm_session* session, const int32_t* prompt, int n_prompt, int steps,
                                  const pocketlm_sampler* sampler, pocketlm_token_fn on_token, void* ctx,
                                  pocketlm_stats* stats);

/* The context (tokens) and vocabulary size of an open session; 0 when not open. */
int pocketlm_seq_len(const pocketlm_session* session);
int pocketlm_vocab_size(const pocketlm_session* session);

/* The one-line message of the last failed call on `session` ("" after a success); NULL: of the
 * last failed call that had no session. */
const char* pocketlm_last_error(const pocketlm_session* session);

/* Ends the session (its memory and the tier buffers are the caller's again). NULL is a no-op. */
void pocketlm_close(pocketlm_session* session);

/* ---- Console: a character grid of 8x8 cells drawn into a 32-bit framebuffer ---- */

typedef struct pocketlm_console pocketlm_console;

/* Bytes of memory a console object needs, alignment padding included. */
size_t pocketlm_console_bytes(void);

/* Makes a console in memory[0..bytes) (any alignment, pocketlm_console_bytes()) over
 * pixels: width x height pixels (at least 8 x 8), `stride` pixels from one row to the next
 * (>= width; the PSP's is 512), each pixel written as given (the PSP's 8888 is 0xAABBGGRR),
 * and clears it to `background`. The grid is width / 8 columns by height / 8 rows. Errors (in
 * pocketlm_last_error(NULL)): null pointers, sizes out of range, memory too small. */
pocketlm_status pocketlm_console_create(void* memory, size_t bytes, uint32_t* pixels, int width, int height,
                                        int stride, uint32_t background, uint32_t foreground,
                                        pocketlm_console** out);
/* Draws UTF-8 text[0..len) (a character may be split across calls; '\n' starts a line; past
 * the last row the cursor wraps to the top, as the PSP's debug screen does). */
void pocketlm_console_write(pocketlm_console* console, const char* text, size_t len);
/* The colour of the cells written from now on. */
void pocketlm_console_set_color(pocketlm_console* console, uint32_t foreground);
/* Clears the screen and puts the cursor at the top left. */
void pocketlm_console_clear(pocketlm_console* console);
int pocketlm_console_columns(const pocketlm_console* console);
int pocketlm_console_rows(const pocketlm_console* console);

/* ---- Text ---- */

/* UTF-16LE (the PSP's on-screen keyboard's outtext, in[0..in_bytes): little-endian code units,
 * as that CPU stores them) to UTF-8 in out[0..capacity), NUL-terminated; *out_bytes (when not
 * NULL) receives the bytes before the NUL. A surrogate pair becomes one character, an unpaired
 * surrogate U+FFFD. Errors (in pocketlm_last_error(NULL)): null pointers, an odd in_bytes, out
 * too small (3 bytes per 2 input bytes and the NUL always suffice; the characters that fit are
 * kept, NUL-terminated). */
pocketlm_status pocketlm_utf16le_to_utf8(const void* in, size_t in_bytes, char* out, size_t capacity,
                                         size_t* out_bytes);

#ifdef __cplusplus
}
#endif

#endif /* POCKETLM_API_POCKETLM_H */
