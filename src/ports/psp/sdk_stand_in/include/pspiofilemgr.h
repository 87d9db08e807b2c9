/* Stand-in for pspsdk's pspiofilemgr.h: the file calls and flags main.c uses. Written here, not
 * copied; checked by scripts/ports/compare-psp-stand-ins. */
#ifndef POCKETLM_STAND_IN_PSPIOFILEMGR_H
#define POCKETLM_STAND_IN_PSPIOFILEMGR_H

#include "psptypes.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PSP_O_RDONLY 0x0001
#define PSP_SEEK_SET 0
#define PSP_SEEK_END 2

/* A file descriptor, or a negative error code. */
SceUID sceIoOpen(const char* path, int flags, SceMode mode);
/* The bytes read, fewer at the end of the file, or a negative error code. */
int sceIoRead(SceUID fd, void* dst, SceSize bytes);
/* The new position, or a negative error code. */
SceOff sceIoLseek(SceUID fd, SceOff offset, int whence);

#ifdef __cplusplus
}
#endif

#endif
