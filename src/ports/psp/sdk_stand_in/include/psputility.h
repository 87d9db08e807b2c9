/* Stand-in for pspsdk's psputility.h (with its psputility_osk.h and psputility_sysparam.h): the
 * on-screen keyboard's structs, calls and values main.c uses. Written here, not copied: the same
 * fields in the same order as the SDK's (the firmware reads them), checked by
 * scripts/ports/compare-psp-stand-ins. */
#ifndef POCKETLM_STAND_IN_PSPUTILITY_H
#define POCKETLM_STAND_IN_PSPUTILITY_H

#ifdef __cplusplus
extern "C" {
#endif

/* What every utility dialog's parameters begin with. */
typedef struct {
  unsigned int size; /* of the whole parameter struct */
  int language;
  int buttonSwap;
  int graphicsThread; /* thread priorities */
  int accessThread;
  int fontThread;
  int soundThread;
  int result;
  int reserved[4];
} pspUtilityDialogCommon;

/* A dialog's state, from its GetStatus call. */
typedef enum {
  PSP_UTILITY_DIALOG_NONE = 0,
  PSP_UTILITY_DIALOG_VISIBLE = 2,
  PSP_UTILITY_DIALOG_QUIT = 3
} pspUtilityDialogState;

enum SceUtilityOskInputLanguage { PSP_UTILITY_OSK_LANGUAGE_DEFAULT = 0x00 };
enum SceUtilityOskResult { PSP_UTILITY_OSK_RESULT_CANCELLED = 1 };
enum SceUtilityOskInputType { PSP_UTILITY_OSK_INPUTTYPE_ALL = 0x00000000 };

/* One text field of the keyboard; strings are UTF-16 code units. */
typedef struct _SceUtilityOskData {
  int unk_00;
  int unk_04;
  int language;
  int unk_12;
  int inputtype;
  int lines;
  int unk_24;
  unsigned short* desc;
  unsigned short* intext;
  int outtextlength; /* units in outtext */
  unsigned short* outtext;
  int result;
  int outtextlimit; /* units the user may type */
} SceUtilityOskData;

typedef struct _SceUtilityOskParams {
  pspUtilityDialogCommon base;
  int datacount;
  SceUtilityOskData* data;
  int state;
  int unk_60;
} SceUtilityOskParams;

int sceUtilityOskInitStart(SceUtilityOskParams* params);
int sceUtilityOskShutdownStart(void);
int sceUtilityOskUpdate(int n);
int sceUtilityOskGetStatus(void);

#define PSP_SYSTEMPARAM_ID_INT_LANGUAGE 8
#define PSP_SYSTEMPARAM_ID_INT_UNKNOWN 9 /* X/O button swap */
int sceUtilityGetSystemParamInt(int id, int* value);

#ifdef __cplusplus
}
#endif

#endif
