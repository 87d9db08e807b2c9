/* Stand-in for ESP-IDF's FreeRTOS.h (see ../esp_err.h): only what main.c uses. Its guard is the
 * SDK's, which freertos/task.h requires, as the SDK's does. UBaseType_t is the Xtensa port's.
 * sdk: components/freertos/FreeRTOS-Kernel/include/freertos/FreeRTOS.h
 * sdk: components/freertos/FreeRTOS-Kernel/portable/xtensa/include/freertos/portmacro.h */
#ifndef INC_FREERTOS_H
#define INC_FREERTOS_H

typedef unsigned int UBaseType_t;

#endif
