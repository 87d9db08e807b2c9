/* The C library's memory and string functions the engine calls, for boards without a C library
   (src/ports/freestanding/README.md). Word copies where both pointers allow them: the Xtensa
   LX7 and the PSP's MIPS fault on unaligned word accesses, so a misaligned pair goes byte by
   byte. Compiled with -fno-builtin (CMakeLists.txt): a compiler that recognised these loops
   would turn them into calls to themselves. */
#include <stddef.h>
#include <stdint.h>

typedef uint32_t __attribute__((may_alias)) word_t;

static int words_ok(const void *a, const void *b) {
  return (((uintptr_t)a | (uintptr_t)b) & (sizeof(word_t) - 1)) == 0;
}

void *memcpy(void *restrict dst, const void *restrict src, size_t n) {
  unsigned char *d = dst;
  const unsigned char *s = src;
  if (words_ok(d, s)) {
    for (; n >= 4 * sizeof(word_t); n -= 4 * sizeof(word_t), d += 4 * sizeof(word_t), s += 4 * sizeof(word_t)) {
      word_t w0 = ((const word_t *)s)[0], w1 = ((const word_t *)s)[1];
      word_t w2 = ((const word_t *)s)[2], w3 = ((const word_t *)s)[3];
      ((word_t *)d)[0] = w0;
      ((word_t *)d)[1] = w1;
      ((word_t *)d)[2] = w2;
      ((word_t *)d)[3] = w3;
    }
    for (; n >= sizeof(word_t); n -= sizeof(word_t), d += sizeof(word_t), s += sizeof(word_t))
      *(word_t *)d = *(const word_t *)s;
  }
  while (n--) *d++ = *s++;
  return dst;
}

void *memmove(void *dst, const void *src, size_t n) {
  unsigned char *d = dst;
  const unsigned char *s = src;
  if (d == s || n == 0) return dst;
  /* Forward is safe when the destination starts before the source or past its end. */
  if (d < s || d >= s + n) {
    while (n--) *d++ = *s++;
  } else {
    d += n;
    s += n;
    while (n--) *--d = *--s;
  }
  return dst;
}

void *memset(void *dst, int c, size_t n) {
  unsigned char *d = dst;
  const unsigned char b = (unsigned char)c;
  for (; n > 0 && ((uintptr_t)d & (sizeof(word_t) - 1)) != 0; --n) *d++ = b;
  const word_t w = (word_t)b * 0x01010101u;
  for (; n >= sizeof(word_t); n -= sizeof(word_t), d += sizeof(word_t)) *(word_t *)d = w;
  while (n--) *d++ = b;
  return dst;
}

int memcmp(const void *a, const void *b, size_t n) {
  const unsigned char *x = a, *y = b;
  for (; n > 0; --n, ++x, ++y)
    if (*x != *y) return *x < *y ? -1 : 1;
  return 0;
}

void *memchr(const void *p, int c, size_t n) {
  const unsigned char *s = p;
  for (; n > 0; --n, ++s)
    if (*s == (unsigned char)c) return (void *)s;
  return NULL;
}

size_t strlen(const char *s) {
  const char *e = s;
  while (*e) ++e;
  return (size_t)(e - s);
}

int strcmp(const char *a, const char *b) {
  const unsigned char *x = (const unsigned char *)a, *y = (const unsigned char *)b;
  while (*x && *x == *y) ++x, ++y;
  return (*x > *y) - (*x < *y);
}

int strncmp(const char *a, const char *b, size_t n) {
  const unsigned char *x = (const unsigned char *)a, *y = (const unsigned char *)b;
  for (; n > 0; --n, ++x, ++y) {
    if (*x != *y) return *x < *y ? -1 : 1;
    if (*x == 0) return 0;
  }
  return 0;
}

char *strchr(const char *s, int c) {
  for (;; ++s) {
    if (*s == (char)c) return (char *)s;
    if (*s == 0) return NULL;
  }
}

size_t strcspn(const char *s, const char *reject) {
  size_t n = 0;
  for (; s[n]; ++n)
    for (const char *r = reject; *r; ++r)
      if (s[n] == *r) return n;
  return n;
}
