/* Stand-in for ESP-IDF's FreeRTOS task API (see ../esp_err.h): only what main.c uses.
 * sdk: components/freertos/FreeRTOS-Kernel/include/freertos/task.h */
#pragma once

#ifndef INC_FREERTOS_H
#error "freertos/FreeRTOS.h must be included before freertos/task.h (so the SDK demands)"
#endif

typedef struct tskTaskControlBlock* TaskHandle_t;

/* The least stack the task (NULL: the calling one) has had free since it started; in bytes on
 * ESP-IDF, whose stack type is a byte. */
UBaseType_t uxTaskGetStackHighWaterMark(TaskHandle_t task);
