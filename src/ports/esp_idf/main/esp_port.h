/* The ESP-IDF port's logic that is not an SDK call, in C over pocketlm.h: compiled into the
 * firmware (main.c) and, on the host, into tests/ports_test.cpp, which puts a file where the
 * flash partition would be. */
#ifndef POCKETLM_PORTS_ESP_PORT_H
#define POCKETLM_PORTS_ESP_PORT_H

#include <stddef.h>
#include <stdint.h>

#include "pocketlm/api/pocketlm.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The esp32s3 profile's figures (apps/pocketlm/devices/esp32s3.json; tests/ports_test.cpp
 * checks them against it): SRAM left to the app, PSRAM, flash, and the flash before the model
 * partition (bootloader, partition table, nvs, phy_init, the factory app). The firmware plans
 * with what its heaps have at run time instead (esp_tier_capacities). */
#define ESP_SRAM_TIER_BYTES 234056u
#define ESP_PSRAM_TIER_BYTES 8388608u
#define ESP_FLASH_BYTES 16777216u
#define ESP_FIRMWARE_RESERVED_BYTES 851968u

/* The model partition, read with esp_partition_read(partition, offset, dst, bytes) (0 = ESP_OK);
 * the host passes a read at an offset into a file holding the partition's bytes. It holds the
 * model file at its start and the tokenizer file at the next 4 KiB boundary after it (esptool
 * writes whole 4 KiB flash sectors: ESP_TOKENIZER_OFFSET). */
#define ESP_SECTOR_BYTES 4096u
#define ESP_TOKENIZER_OFFSET(model_bytes) \
  (((uint64_t)(model_bytes) + ESP_SECTOR_BYTES - 1) / ESP_SECTOR_BYTES * ESP_SECTOR_BYTES)
typedef struct esp_model_partition {
  int (*read)(const void* partition, size_t offset, void* dst, size_t bytes);
  const void* partition; /* the esp_partition_t* (the host: its own handle) */
  uint32_t partition_bytes; /* esp_partition_t.size */
  uint32_t model_bytes;     /* the model file written at the partition's start */
  uint32_t tokenizer_bytes; /* tokenizer.bin written at ESP_TOKENIZER_OFFSET(model_bytes) */
} esp_model_partition;

/* One file of the partition: [offset, offset + bytes). */
typedef struct esp_partition_file {
  const esp_model_partition* part;
  uint32_t offset;
  uint32_t bytes;
} esp_partition_file;

/* pocketlm_storage's read over an esp_partition_file (ctx): the range must lie in the file (and
 * so in the partition and in size_t); returns 0, -1 for a range outside it, or the partition
 * read's error. */
int esp_file_read(void* ctx, uint64_t offset, void* dst, size_t bytes);

/* Checks the two files against their partition (each > 0 bytes, the tokenizer's end at most
 * partition_bytes) and makes their storages over `model` and `tokenizer` (which must outlive
 * them). Errors (POCKETLM_INVALID_ARGUMENT, message into `message`, one line): a file of 0 bytes
 * (POCKETLM_MODEL_BYTES or POCKETLM_TOKENIZER_BYTES unset), files larger than the partition. */
pocketlm_status esp_partition_storages(const esp_model_partition* part, esp_partition_file* model,
                                       esp_partition_file* tokenizer, pocketlm_config* config, char* message,
                                       size_t message_bytes);

/* The config of an ESP32-S3 N16R8: tiers sram then psram, the flash as storage with the
 * firmware's reserved bytes, tiled4. */
void esp_config(pocketlm_config* config);

/* heap_caps_malloc's caps for RAM tier `tier` of the config: internal SRAM for tier 0, PSRAM
 * for tier 1 (the caps values are the SDK's, passed in: internal, spiram). */
uint32_t esp_tier_caps(int tier, uint32_t cap_internal, uint32_t cap_spiram, uint32_t cap_8bit);

/* esp_partition_read into memory the flash driver cannot write directly (PSRAM) copies through
 * a bounce buffer that the driver mallocs from internal SRAM for each read: at most 16 KiB
 * (ESP-IDF's esp_flash_read reads in chunks of at most 16384 bytes), smaller and so slower when
 * less is free, and the read fails when none is. The sram tier leaves it free. */
#define ESP_FLASH_BOUNCE_BYTES 16384u
/* What the heap itself needs beside a tier's block: the allocator's block headers, the gap
 * heap_caps_aligned_alloc may leave before the aligned address (tens of bytes each), and the
 * stdio buffers of the first printf: a round margin (not measured on a board). */
#define ESP_HEAP_SLACK_BYTES 1024u

/* A tier's capacity from its heap's largest free block (heap_caps_get_largest_free_block for
 * the tier's caps): the block less `reserve` (what must stay free in that heap) and
 * ESP_HEAP_SLACK_BYTES, rounded down to POCKETLM_ALIGNMENT; 0 when nothing is left. */
uint64_t esp_tier_capacity(size_t largest_free_block, size_t reserve);

/* Sets the config's two tier capacities from largest_free[t] (tier t's largest free block):
 * the sram tier reserves ESP_FLASH_BOUNCE_BYTES, the psram tier nothing more. A tier left with
 * nothing is POCKETLM_OUT_OF_MEMORY (message into `message`, one line): to the engine a
 * capacity of 0 means unbounded. */
pocketlm_status esp_tier_capacities(pocketlm_config* config, const size_t largest_free[2], char* message,
                                    size_t message_bytes);

#ifdef __cplusplus
}
#endif

#endif
