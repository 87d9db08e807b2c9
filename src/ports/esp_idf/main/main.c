/* pocketlm on an ESP32-S3 N16R8: compiled here for Xtensa against stand-ins of the SDK's headers,
 * not linked with ESP-IDF or run on a board (../README.md). The model and Llama 2's tokenizer.bin
 * are read from the "model" flash partition (the model at its start, the tokenizer after it)
 * with esp_partition_read, the session's tiers are allocated from internal SRAM and from PSRAM
 * as large as those heaps allow at run time, and the story goes to the console (UART).
 * Everything but the SDK calls is esp_port.c, which tests/ports_test.cpp runs on the host; the
 * engine is reached only through pocketlm.h. The main task's stack is 16 KiB
 * (sdkconfig.defaults); how much of it was never touched is printed after the story. */
#include <stdio.h>
#include <string.h>

#include "esp_err.h"
#include "esp_heap_caps.h"
#include "esp_partition.h"
#include "esp_timer.h"
#include "freertos/FreeRTOS.h"
#include "freertos/task.h"
#include "sdkconfig.h"
#include "esp_port.h"

#if !CONFIG_SPIRAM
#error "the psram tier needs CONFIG_SPIRAM=y (sdkconfig.defaults)"
#endif

#ifndef POCKETLM_PROMPT
#define POCKETLM_PROMPT "Once upon a time"
#endif

static int partition_read(const void* partition, size_t offset, void* dst, size_t bytes) {
  return esp_partition_read((const esp_partition_t*)partition, offset, dst, bytes) == ESP_OK ? 0 : -1;
}

static uint64_t clock_us(void) { return (uint64_t)esp_timer_get_time(); }

static int on_token(void* ctx, int32_t token, const char* piece, size_t len) {
  (void)ctx;
  (void)token;
  fwrite(piece, 1, len, stdout);
  fflush(stdout);
  return 0;
}

static int stop(const char* what, const char* message) {
  printf("pocketlm: %s: %s\n", what, message);
  return 1;
}

static int run(void) {
  static esp_model_partition part;
  static esp_partition_file model_file, tokenizer_file;
  static pocketlm_config config;
  static pocketlm_memory_plan plan = {.size = sizeof plan};
  static int32_t tokens[(sizeof(POCKETLM_PROMPT) + 2) * 7];
  static char message[160];
  const esp_partition_t* partition =
      esp_partition_find_first(ESP_PARTITION_TYPE_DATA, (esp_partition_subtype_t)0x40, "model");
  if (!partition) return stop("partition", "no data partition 'model' (subtype 0x40): flash partitions.csv");
  part.read = partition_read;
  part.partition = partition;
  part.partition_bytes = partition->size;
  part.model_bytes = POCKETLM_MODEL_BYTES;
  part.tokenizer_bytes = POCKETLM_TOKENIZER_BYTES;

  esp_config(&config);
  if (esp_partition_storages(&part, &model_file, &tokenizer_file, &config, message, sizeof message))
    return stop("model partition", message);
  config.clock = clock_us;
  config.clock_ticks_per_second = 1000000;

  /* The session object (about 30 KiB) in PSRAM: the SRAM is the arena's hottest tier. */
  void* memory = heap_caps_malloc(pocketlm_session_bytes(), MALLOC_CAP_SPIRAM | MALLOC_CAP_8BIT);
  pocketlm_session* session = NULL;
  if (pocketlm_create(memory, pocketlm_session_bytes(), &session)) return stop("session", pocketlm_last_error(NULL));
  /* The tiers as large as the heaps allow now, not the profile's figures (nobody measured them
   * on a board); the sram tier leaves the flash driver's bounce buffer free. */
  uint32_t caps[2];
  size_t largest_free[2];
  for (int t = 0; t < 2; ++t) {
    caps[t] = esp_tier_caps(t, MALLOC_CAP_INTERNAL, MALLOC_CAP_SPIRAM, MALLOC_CAP_8BIT);
    largest_free[t] = heap_caps_get_largest_free_block(caps[t]);
  }
  if (esp_tier_capacities(&config, largest_free, message, sizeof message)) return stop("tiers", message);
  if (pocketlm_plan(session, &config, &plan)) return stop("plan", pocketlm_last_error(session));
  for (int t = 0; t < config.ram_tier_count; ++t) {
    config.tier_buffer_bytes[t] = (size_t)plan.tiers[t].bytes;
    config.tier_buffers[t] =
        plan.tiers[t].bytes ? heap_caps_aligned_alloc(POCKETLM_ALIGNMENT, config.tier_buffer_bytes[t], caps[t]) : NULL;
    printf("pocketlm: tier %s: %llu of %llu bytes\n", plan.tiers[t].name, (unsigned long long)plan.tiers[t].bytes,
           (unsigned long long)config.ram_tiers[t].capacity);
  }
  printf("pocketlm: internal SRAM's largest free block for flash reads: %u bytes\n",
         (unsigned)heap_caps_get_largest_free_block(caps[0]));
  if (pocketlm_open(session, &config)) return stop("open", pocketlm_last_error(session));
  int n = 0;
  if (pocketlm_encode(session, POCKETLM_PROMPT, strlen(POCKETLM_PROMPT), 1, tokens, sizeof tokens / sizeof tokens[0], &n))
    return stop("encode", pocketlm_last_error(session));
  pocketlm_sampler sampler;
  pocketlm_sampler_defaults(&sampler);
  sampler.temperature = 0.8f;
  sampler.seed = (uint64_t)esp_timer_get_time() | 1u;
  pocketlm_stats stats = {.size = sizeof stats};
  if (pocketlm_generate(session, tokens, n, 128, &sampler, on_token, NULL, &stats))
    return stop("generate", pocketlm_last_error(session));
  printf("\npocketlm: %d tokens sampled in %.2f s\n", stats.decode_passes, stats.decode_seconds);
  /* ESP-IDF's FreeRTOS counts stack in bytes. */
  printf("pocketlm: main task stack: %u of %d bytes never used\n", (unsigned)uxTaskGetStackHighWaterMark(NULL),
         CONFIG_ESP_MAIN_TASK_STACK_SIZE);
  return 0;
}

void app_main(void) { run(); }
