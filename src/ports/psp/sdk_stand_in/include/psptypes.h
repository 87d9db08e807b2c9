/* Stand-in for pspsdk: the base and kernel types the other stand-ins use (pspsdk declares them
 * in psptypes.h and pspkerneltypes.h). Written here, not copied: same types as the SDK's, checked
 * by scripts/ports/compare-psp-stand-ins; used only to compile the port without the SDK
 * (scripts/ports/check-psp). The real build includes pspsdk's own headers. */
#ifndef POCKETLM_STAND_IN_PSPTYPES_H
#define POCKETLM_STAND_IN_PSPTYPES_H

#include <stdint.h>

typedef unsigned int SceSize;
typedef unsigned int SceUInt;
typedef int64_t SceInt64;
typedef int SceUID;  /* a kernel object's id; negative = an error code */
typedef int SceMode; /* file permission bits */
typedef SceInt64 SceOff;

/* A thread's body: the bytes and address of its argument block. */
typedef int (*SceKernelThreadEntry)(SceSize args, void* argp);

#endif
