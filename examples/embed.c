#include <stdio.h>
#include <stdlib.h>
#include "pocketlm/api/pocketlm.h"
static int file_read(void* f, uint64_t at, void* dst, size_t n) { return fseek(f, (long)at, SEEK_SET) || fread(dst, 1, n, f) != n; }
static int print_piece(void* ctx, int32_t id, const char* piece, size_t len) { fwrite(piece, 1, len, stdout); return 0; }
int main(int argc, char** argv) {
  FILE* f = argc > 1 ? fopen(argv[1], "rb") : NULL;  /* a GGUF model carrying its tokenizer */
  if (!f || fseek(f, 0, SEEK_END)) return 1;
  pocketlm_config cfg; pocketlm_sampler sampler; pocketlm_memory_plan plan = {sizeof plan};
  pocketlm_config_defaults(&cfg); pocketlm_sampler_defaults(&sampler);
  cfg.model = (pocketlm_storage){file_read, f, (uint64_t)ftell(f), argv[1]};
  sampler.temperature = 0.8f; sampler.seed = 42;
  pocketlm_session* s; int32_t ids[256]; int n, failed;
  void* memory = malloc(pocketlm_session_bytes());
  failed = pocketlm_create(memory, pocketlm_session_bytes(), &s) || pocketlm_plan(s, &cfg, &plan);  /* sizes the buffer */
  cfg.tier_buffer_bytes[0] = plan.tiers[0].bytes + POCKETLM_ALIGNMENT;  /* malloc may align to 8 only */
  cfg.tier_buffers[0] = malloc(cfg.tier_buffer_bytes[0]);  /* the API allocates nothing */
  failed = failed || pocketlm_open(s, &cfg) || pocketlm_encode(s, "Once upon a time", 16, 1, ids, 256, &n) ||
           pocketlm_generate(s, ids, n, 48, &sampler, print_piece, NULL, NULL);
  if (failed) fprintf(stderr, "error: %s\n", pocketlm_last_error(s));
  pocketlm_close(s); free(cfg.tier_buffers[0]); free(memory); fclose(f);
  return failed;
}
