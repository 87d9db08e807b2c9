/* Stand-in for pspsdk's pspge.h: the one call main.c makes. Written here, not copied; checked
 * by scripts/ports/compare-psp-stand-ins. */
#ifndef POCKETLM_STAND_IN_PSPGE_H
#define POCKETLM_STAND_IN_PSPGE_H

#ifdef __cplusplus
extern "C" {
#endif

/* The start of VRAM (2 MiB of eDRAM), cached; OR 0x40000000 for the uncached view. */
void* sceGeEdramGetAddr(void);

#ifdef __cplusplus
}
#endif

#endif
