/* Stand-in for ESP-IDF's high-resolution timer (see esp_err.h): only what main.c uses.
 * sdk: components/esp_timer/include/esp_timer.h */
#pragma once

#include <stdint.h>

/* Microseconds since the timer started at boot. */
int64_t esp_timer_get_time(void);
