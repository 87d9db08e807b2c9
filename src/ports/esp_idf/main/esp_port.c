/* The ESP-IDF port's logic without SDK calls (esp_port.h). */
#include "esp_port.h"

#include <stdio.h>
#include <string.h>

int esp_file_read(void* ctx, uint64_t offset, void* dst, size_t bytes) {
  const esp_partition_file* f = (const esp_partition_file*)ctx;
  if (offset > f->bytes || bytes > f->bytes - offset) return -1;
  return f->part->read(f->part->partition, (size_t)(f->offset + offset), dst, bytes);
}

pocketlm_status esp_partition_storages(const esp_model_partition* part, esp_partition_file* model,
                                       esp_partition_file* tokenizer, pocketlm_config* config, char* message,
                                       size_t message_bytes) {
  if (part->model_bytes == 0 || part->tokenizer_bytes == 0) {
    snprintf(message, message_bytes, "%s = 0: give the file's size at build time",
             part->model_bytes == 0 ? "POCKETLM_MODEL_BYTES" : "POCKETLM_TOKENIZER_BYTES");
    return POCKETLM_INVALID_ARGUMENT;
  }
  const uint64_t tokenizer_offset = ESP_TOKENIZER_OFFSET(part->model_bytes);
  if (tokenizer_offset + part->tokenizer_bytes > part->partition_bytes) {
    snprintf(message, message_bytes,
             "POCKETLM_MODEL_BYTES = %lu, POCKETLM_TOKENIZER_BYTES = %lu: the tokenizer, at offset %lu, ends past the "
             "model partition (%lu bytes)",
             (unsigned long)part->model_bytes, (unsigned long)part->tokenizer_bytes, (unsigned long)tokenizer_offset,
             (unsigned long)part->partition_bytes);
    return POCKETLM_INVALID_ARGUMENT;
  }
  *model = (esp_partition_file){part, 0, part->model_bytes};
  *tokenizer = (esp_partition_file){part, (uint32_t)tokenizer_offset, part->tokenizer_bytes};
  config->model = (pocketlm_storage){esp_file_read, model, part->model_bytes, "flash:model"};
  config->tokenizer = (pocketlm_storage){esp_file_read, tokenizer, part->tokenizer_bytes, "flash:tokenizer.bin"};
  if (message_bytes) message[0] = '\0';
  return POCKETLM_OK;
}

void esp_config(pocketlm_config* config) {
  pocketlm_config_defaults(config);
  config->ram_tier_count = 2;
  config->ram_tiers[0].name = "sram";
  config->ram_tiers[0].capacity = ESP_SRAM_TIER_BYTES;
  config->ram_tiers[1].name = "psram";
  config->ram_tiers[1].capacity = ESP_PSRAM_TIER_BYTES;
  config->storage_name = "flash";
  config->storage_capacity = ESP_FLASH_BYTES;
  config->storage_reserved = ESP_FIRMWARE_RESERVED_BYTES;
  config->kernels = "tiled4";
}

uint32_t esp_tier_caps(int tier, uint32_t cap_internal, uint32_t cap_spiram, uint32_t cap_8bit) {
  return (tier == 0 ? cap_internal : cap_spiram) | cap_8bit;
}

uint64_t esp_tier_capacity(size_t largest_free_block, size_t reserve) {
  const uint64_t need = (uint64_t)reserve + ESP_HEAP_SLACK_BYTES;
  if (largest_free_block <= need) return 0;
  return ((uint64_t)largest_free_block - need) / POCKETLM_ALIGNMENT * POCKETLM_ALIGNMENT;
}

pocketlm_status esp_tier_capacities(pocketlm_config* config, const size_t largest_free[2], char* message,
                                    size_t message_bytes) {
  for (int t = 0; t < 2; ++t) {
    const size_t reserve = t == 0 ? ESP_FLASH_BOUNCE_BYTES : 0;
    config->ram_tiers[t].capacity = esp_tier_capacity(largest_free[t], reserve);
    if (config->ram_tiers[t].capacity == 0) {
      snprintf(message, message_bytes,
               "tier %s: its heap's largest free block, %lu bytes, leaves no room after the %lu kept free "
               "(the flash reads' bounce buffer, the heap's own)",
               config->ram_tiers[t].name, (unsigned long)largest_free[t],
               (unsigned long)(reserve + ESP_HEAP_SLACK_BYTES));
      return POCKETLM_OUT_OF_MEMORY;
    }
  }
  if (message_bytes) message[0] = '\0';
  return POCKETLM_OK;
}
