/* Stand-in for pspsdk's pspkernel.h (through pspuser.h): the module declaration macros and the
 * thread, callback and exit calls main.c makes. Written here, not copied: same declarations as
 * the SDK's, checked by scripts/ports/compare-psp-stand-ins (src/ports/psp/README.md). */
#ifndef POCKETLM_STAND_IN_PSPKERNEL_H
#define POCKETLM_STAND_IN_PSPKERNEL_H

#include "psptypes.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The module record the loader reads from .rodata.sceModuleInfo. */
typedef struct _scemoduleinfo {
  unsigned short modattribute;
  unsigned char modversion[2]; /* minor, major */
  char modname[27];
  char terminal;
  void* gp_value;
  void* ent_top;
  void* ent_end;
  void* stub_top;
  void* stub_end;
} _sceModuleInfo;
typedef const _sceModuleInfo SceModuleInfo;

extern char _gp[];

enum PspModuleInfoAttr { PSP_MODULE_USER = 0 };

/* The module record, with the linker's bounds of the export and import tables (C form). */
#define PSP_MODULE_INFO(name, attributes, major_version, minor_version)                          \
  extern char __lib_ent_top[], __lib_ent_bottom[];                                               \
  extern char __lib_stub_top[], __lib_stub_bottom[];                                             \
  SceModuleInfo module_info __attribute__((section(".rodata.sceModuleInfo"), aligned(16), unused)) = { \
      attributes, {minor_version, major_version}, name, 0, _gp, __lib_ent_top, __lib_ent_bottom,  \
      __lib_stub_top, __lib_stub_bottom}

/* Read by the start-up code (crt0) and libcglue, which look for these names. */
#define PSP_MAIN_THREAD_ATTR(attr) unsigned int sce_newlib_attribute = (attr)
#define PSP_HEAP_SIZE_KB(size_kb) int sce_newlib_heap_kb_size = (size_kb)

enum PspThreadAttributes {
  PSP_THREAD_ATTR_VFPU = 0x00004000, /* the thread may use the VFPU */
  PSP_THREAD_ATTR_USER = 0x80000000  /* a user-mode thread */
};

/* Passed as NULL by main.c: its fields are not needed here. */
typedef struct SceKernelThreadOptParam SceKernelThreadOptParam;

/* A callback's body: two arguments from whoever notifies it, and its common pointer. */
typedef int (*SceKernelCallbackFunction)(int arg1, int arg2, void* arg);

SceUID sceKernelCreateThread(const char* name, SceKernelThreadEntry entry, int priority, int stack_bytes,
                             SceUInt attributes, SceKernelThreadOptParam* options);
int sceKernelStartThread(SceUID thread, SceSize args, void* argp);
int sceKernelSleepThread(void);
/* Sleeps, running the thread's callbacks when they are notified. */
int sceKernelSleepThreadCB(void);
int sceKernelCreateCallback(const char* name, SceKernelCallbackFunction callback, void* arg);
/* The callback run when the user quits from the HOME menu. */
int sceKernelRegisterExitCallback(int callback);
/* Back to the XMB. */
void sceKernelExitGame(void);
/* Microseconds since boot. */
SceInt64 sceKernelGetSystemTimeWide(void);

#ifdef __cplusplus
}
#endif

#endif
