/* Stand-in for ESP-IDF's error type, for compiling main.c without the SDK (scripts/ports/check-esp):
 * our own declarations with the SDK's types and values, which scripts/ports/compare-esp-stand-ins
 * checks against the file below. Only what main.c uses.
 * sdk: components/esp_common/include/esp_err.h */
#pragma once

typedef int esp_err_t;

/* Success; every other value is an error code. */
#define ESP_OK 0
