/* The ESP-IDF port's logic without SDK calls (esp_port.h). */
#include "esp_port.h"

#include <stdio.h>
#include <string.h>

int esp_model_read(void* ctx, uint64_t offset, void* dst, size_t bytes) {
  const esp_model_partition* p = (const esp_model_partition*)ctx;
  if (offset > p->model_bytes || bytes > p->model_bytes - offset) return -1;
  return p->read(p->partition, (size_t)offset, dst, bytes);
}

pocketlm_status esp_model_storage(esp_model_partition* part, pocketlm_storage* storage, char* message,
                                  size_t message_bytes) {
  if (part->model_bytes == 0) {
    snprintf(message, message_bytes, "POCKETLM_MODEL_BYTES = 0: give the model file's size at build time");
    return POCKETLM_INVALID_ARGUMENT;
  }
  if (part->model_bytes > part->partition_bytes) {
    snprintf(message, message_bytes, "POCKETLM_MODEL_BYTES = %lu: larger than the model partition (%lu bytes)",
             (unsigned long)part->model_bytes, (unsigned long)part->partition_bytes);
    return POCKETLM_INVALID_ARGUMENT;
  }
  storage->read = esp_model_read;
  storage->ctx = part;
  storage->size = part->model_bytes;
  storage->name = "flash:model";
  if (message_bytes) message[0] = '\0';
  return POCKETLM_OK;
}

void esp_config(pocketlm_config* config) {
  memset(config, 0, sizeof *config);
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
