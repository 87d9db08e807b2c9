/* Stand-in for pspsdk's pspdebug.h: the debug screen's two calls main.c makes. Written here, not
 * copied; checked by scripts/ports/compare-psp-stand-ins. */
#ifndef POCKETLM_STAND_IN_PSPDEBUG_H
#define POCKETLM_STAND_IN_PSPDEBUG_H

#ifdef __cplusplus
extern "C" {
#endif

/* Clears the debug screen and shows it: 32-bit pixels at the start of VRAM, 512 to a line. */
void pspDebugScreenInit(void);
void pspDebugScreenPrintf(const char* format, ...) __attribute__((format(printf, 1, 2)));

#ifdef __cplusplus
}
#endif

#endif
