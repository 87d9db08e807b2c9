/* The PSP port's logic without SDK calls (psp_port.h). */
#include "psp_port.h"

#include <string.h>

int psp_file_read(void* ctx, uint64_t offset, void* dst, size_t bytes) {
  psp_file* f = (psp_file*)ctx;
  unsigned char* out = (unsigned char*)dst;
  if (f->position != (int64_t)offset) {
    if (f->seek(f->fd, (int64_t)offset) != (int64_t)offset) {
      f->position = -1;
      return -1;
    }
    f->position = (int64_t)offset;
  }
  while (bytes > 0) {
    /* sceIoRead takes a 32-bit size; the engine's reads are at most 64 KiB anyway. */
    const uint32_t ask = bytes > 0x100000u ? 0x100000u : (uint32_t)bytes;
    const int got = f->read(f->fd, out, ask);
    if (got < 0) {
      f->position = -1;
      return -2;
    }
    if (got == 0) return -3;
    out += got;
    bytes -= (size_t)got;
    f->position += got;
  }
  return 0;
}

pocketlm_storage psp_file_storage(psp_file* file, const char* name) {
  pocketlm_storage s;
  s.read = psp_file_read;
  s.ctx = file;
  s.size = file->size;
  s.name = name;
  return s;
}

void psp_config(pocketlm_config* config, uint64_t heap_bytes) {
  pocketlm_config_defaults(config);
  config->ram_tier_count = 1;
  config->ram_tiers[0].name = "heap";
  config->ram_tiers[0].capacity = heap_bytes;
  config->storage_name = "memory stick";
  config->kernels = "tiled4";
}

pocketlm_status psp_console_open(void* memory, size_t bytes, uint32_t* vram, pocketlm_console** out) {
  return pocketlm_console_create(memory, bytes, vram, PSP_SCREEN_WIDTH, PSP_SCREEN_HEIGHT, PSP_LINE_PIXELS,
                                 0xFF000000u, 0xFFFFFFFFu, out);
}

pocketlm_status psp_osk_prompt(const uint16_t* outtext, size_t units, char* prompt, size_t capacity, size_t* len) {
  size_t n = 0;
  /* The units' bytes are UTF-16LE on a little-endian CPU (the PSP; the hosts the tests run on). */
  while (n < units && outtext && outtext[n] != 0) ++n;
  return pocketlm_utf16le_to_utf8(outtext, n * 2, prompt, capacity, len);
}

const char* psp_model_path(const char* argv0, char* out, size_t capacity) {
  const char* slash = argv0 ? strrchr(argv0, '/') : NULL;
  if (!slash) return PSP_DEFAULT_MODEL_PATH;
  const size_t dir = (size_t)(slash - argv0) + 1;
  if (dir + sizeof PSP_MODEL_FILE > capacity) return PSP_DEFAULT_MODEL_PATH;
  memcpy(out, argv0, dir);
  memcpy(out + dir, PSP_MODEL_FILE, sizeof PSP_MODEL_FILE);
  return out;
}

uint32_t psp_fcr31_without_traps(uint32_t fcr31) { return fcr31 & ~PSP_FCR31_ENABLES; }
