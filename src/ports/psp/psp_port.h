/* The PSP port's logic that is not an SDK call, in C over pocketlm.h: compiled into the EBOOT
 * (main.c) and, on the host, into tests/ports_test.cpp, which drives it with POSIX file calls in
 * place of sceIo and a 512 x 272 array in place of VRAM. */
#ifndef POCKETLM_PORTS_PSP_PORT_H
#define POCKETLM_PORTS_PSP_PORT_H

#include <stddef.h>
#include <stdint.h>

#include "pocketlm/api/pocketlm.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The screen: 480 x 272 pixels of 32-bit 8888 (0xAABBGGRR), 512 pixels a line in VRAM. */
#define PSP_SCREEN_WIDTH 480
#define PSP_SCREEN_HEIGHT 272
#define PSP_LINE_PIXELS 512

/* VRAM (2 MiB) as main.c lays it out, offsets from its start: the console's frame first, where
 * the debug screen is too and which the GU never draws into, so the story stays while the
 * on-screen keyboard is up; then the GU's draw and display frames the keyboard is drawn over,
 * and its 16-bit depth buffer. */
#define PSP_VRAM_BYTES 0x200000u
#define PSP_FRAME_BYTES ((uint32_t)PSP_LINE_PIXELS * PSP_SCREEN_HEIGHT * 4)
#define PSP_DEPTH_BYTES ((uint32_t)PSP_LINE_PIXELS * PSP_SCREEN_HEIGHT * 2)
#define PSP_CONSOLE_FRAME_OFFSET 0u
#define PSP_GU_DRAW_OFFSET (1 * PSP_FRAME_BYTES)
#define PSP_GU_DISPLAY_OFFSET (2 * PSP_FRAME_BYTES)
#define PSP_GU_DEPTH_OFFSET (3 * PSP_FRAME_BYTES)

/* The model: model.gguf beside the EBOOT, wherever it was started from (argv[0], e.g.
 * "ef0:/PSP/GAME/pocketlm/EBOOT.PBP" on a PSP Go's internal storage), else this path. */
#define PSP_MODEL_FILE "model.gguf"
#define PSP_DEFAULT_MODEL_PATH "ms0:/PSP/GAME/pocketlm/model.gguf"

/* The model's path for an EBOOT at argv0: its directory (up to the last '/') and PSP_MODEL_FILE
 * in out[0..capacity), returning out; PSP_DEFAULT_MODEL_PATH when argv0 is NULL, has no '/' or
 * the path does not fit. */
const char* psp_model_path(const char* argv0, char* out, size_t capacity);

/* A file read with the two calls sceIo has for it: seek (sceIoLseek(fd, offset, SEEK_SET),
 * returning the new position or a negative error) and read (sceIoRead(fd, dst, bytes), returning
 * the bytes read, fewer at the end, or a negative error). The host passes lseek and read. */
typedef struct psp_file {
  int64_t (*seek)(void* fd, int64_t offset);
  int (*read)(void* fd, void* dst, uint32_t bytes);
  void* fd;
  int64_t position; /* where the next read starts; -1 = unknown (seek first) */
  uint64_t size;
} psp_file;

/* pocketlm_storage's read over a psp_file (ctx): seeks only when the offset is not where the
 * last read ended (a memory stick seek costs ~2.8 ms), then reads until `bytes` have arrived.
 * Returns 0, or -1 after a failed seek, -2 after a failed read, -3 at an early end of file. */
int psp_file_read(void* ctx, uint64_t offset, void* dst, size_t bytes);

/* A pocketlm_storage over `file` (whose size and calls are set). */
pocketlm_storage psp_file_storage(psp_file* file, const char* name);

/* The config of a PSP: one RAM tier "heap" of heap_bytes (the device profile's heap tier,
 * apps/pocketlm/devices/psp.json or psp-2000.json), the memory stick as storage, tiled4. */
void psp_config(pocketlm_config* config, uint64_t heap_bytes);

/* A console over the debug screen's framebuffer `vram` (PSP_LINE_PIXELS x PSP_SCREEN_HEIGHT
 * pixels), white on black: 60 columns x 34 rows. memory holds pocketlm_console_bytes(). */
pocketlm_status psp_console_open(void* memory, size_t bytes, uint32_t* vram, pocketlm_console** out);

/* The OSK's outtext (UTF-16LE code units, at most `units`, ended by U+0000 or by `units`) as a
 * UTF-8, NUL-terminated prompt in prompt[0..capacity); *len receives its bytes. Errors as
 * pocketlm_utf16le_to_utf8 (an empty string is a prompt of 0 bytes). */
pocketlm_status psp_osk_prompt(const uint16_t* outtext, size_t units, char* prompt, size_t capacity, size_t* len);

/* The Allegrex FPU's control register FCR31 with only its trap-enable bits (7..11: inexact,
 * underflow, overflow, divide-by-zero, invalid) cleared: rounding mode, flags, cause bits and
 * the flush-to-zero bit (24) stay as they were, so results are the IEEE ones the tests check. */
#define PSP_FCR31_ENABLES 0x00000F80u
#define PSP_FCR31_FLUSH_TO_ZERO 0x01000000u
uint32_t psp_fcr31_without_traps(uint32_t fcr31);

#ifdef __cplusplus
}
#endif

#endif
