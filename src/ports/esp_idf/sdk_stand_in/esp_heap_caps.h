/* Stand-in for ESP-IDF's capability-based heap (see esp_err.h): only what main.c uses.
 * sdk: components/heap/include/esp_heap_caps.h */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* Capability bits a block must have: byte-addressable, in the external PSRAM, in internal SRAM. */
#define MALLOC_CAP_8BIT (1 << 2)
#define MALLOC_CAP_SPIRAM (1 << 10)
#define MALLOC_CAP_INTERNAL (1 << 11)

/* A block of `bytes` with every capability in `caps` (4-byte aligned), or NULL. */
void* heap_caps_malloc(size_t bytes, uint32_t caps);
/* The same from an address that is a multiple of `alignment` (a power of two), or NULL. */
void* heap_caps_aligned_alloc(size_t alignment, size_t bytes, uint32_t caps);
/* The largest `bytes` for which heap_caps_malloc(bytes, caps) would succeed now. */
size_t heap_caps_get_largest_free_block(uint32_t caps);
