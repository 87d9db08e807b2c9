/* Stand-in for ESP-IDF's partition API (see esp_err.h): only what main.c uses.
 * sdk: components/esp_partition/include/esp_partition.h */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "esp_err.h"

typedef struct esp_flash_t esp_flash_t;

typedef enum {
  ESP_PARTITION_TYPE_DATA = 0x01,
} esp_partition_type_t;

/* Subtypes are 8-bit numbers; an application's own data partition may take any (main.c: 0x40). */
typedef enum {
  ESP_PARTITION_SUBTYPE_ANY = 0xff,
} esp_partition_subtype_t;

/* The SDK's partition record from its start to `size`, the one field main.c reads: the SDK's
 * record goes on (erase size, label, flags), and main.c only reads records the SDK made. */
typedef struct {
  esp_flash_t* flash_chip;
  esp_partition_type_t type;
  esp_partition_subtype_t subtype;
  uint32_t address;
  uint32_t size;
} esp_partition_t;

/* The first partition of that type and subtype whose label is `label` (NULL: any), or NULL. */
const esp_partition_t* esp_partition_find_first(esp_partition_type_t type, esp_partition_subtype_t subtype,
                                                const char* label);
/* Copies `bytes` bytes at `offset` into the partition to dst; ESP_OK or an error code. */
esp_err_t esp_partition_read(const esp_partition_t* partition, size_t offset, void* dst, size_t bytes);
