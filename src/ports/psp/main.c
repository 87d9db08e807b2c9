/* pocketlm on a Sony PSP, built with pspdev (README.md). Reads a GGUF model (with its tokenizer)
 * with sceIo from the EBOOT's own folder, plans it into the heap, and chats: each on-screen
 * keyboard entry is a turn (the kv cache kept between turns, as `console --device psp` shows),
 * drawn through pocketlm's console into the debug screen's frame. HOME quits. Everything but the
 * SDK calls is psp_port.c, which tests/ports_test.cpp runs on the host; the engine is reached
 * only through pocketlm.h. scripts/ports/check-psp compiles this file for MIPS32 against
 * stand-ins of the SDK's headers (sdk_stand_in/); it is not linked or run here. */
#include <pspdebug.h>
#include <pspdisplay.h>
#include <pspge.h>
#include <pspgu.h>
#include <pspiofilemgr.h>
#include <pspkernel.h>
#include <psputility.h>
#include <malloc.h> /* memalign */
#include <stdlib.h>
#include <string.h>

#include "pocketlm_heap.h" /* POCKETLM_HEAP_KB, POCKETLM_HEAP_TIER_BYTES: written by the Makefile */
#include "psp_port.h"

PSP_MODULE_INFO("pocketlm", PSP_MODULE_USER, 1, 0);
PSP_MAIN_THREAD_ATTR(PSP_THREAD_ATTR_USER | PSP_THREAD_ATTR_VFPU);
/* The heap: the Makefile's HEAP_KB, sized from the plan (README.md). */
PSP_HEAP_SIZE_KB(POCKETLM_HEAP_KB);

#define OSK_UNITS 256

/* The GU's display list: a frame's clear is a few dozen words, and each sceGuStart begins the
 * list again. */
static unsigned int __attribute__((aligned(16))) gu_list[4096];

static int64_t io_seek(void* fd, int64_t offset) { return sceIoLseek((SceUID)(intptr_t)fd, offset, PSP_SEEK_SET); }
static int io_read(void* fd, void* dst, uint32_t bytes) { return sceIoRead((SceUID)(intptr_t)fd, dst, bytes); }

static pocketlm_console* g_console;

static int on_token(void* ctx, int32_t token, const char* piece, size_t len) {
  (void)ctx;
  (void)token;
  pocketlm_console_write(g_console, piece, len);
  return 0;
}

static void set_fpu_no_traps(void) {
  uint32_t fcr31;
  __asm__ volatile("cfc1 %0, $31" : "=r"(fcr31));
  fcr31 = psp_fcr31_without_traps(fcr31);
  __asm__ volatile("ctc1 %0, $31" : : "r"(fcr31));
}

/* HOME, then "quit": the kernel runs this on the callback thread. */
static int on_exit_request(int arg1, int arg2, void* common) {
  (void)arg1;
  (void)arg2;
  (void)common;
  sceKernelExitGame();
  return 0;
}

/* The exit callback runs only on a thread asleep with callbacks enabled, which the main thread,
 * generating, never is: this one sleeps for it. */
static int callback_thread(SceSize args, void* argp) {
  (void)args;
  (void)argp;
  sceKernelRegisterExitCallback(sceKernelCreateCallback("pocketlm exit", on_exit_request, NULL));
  sceKernelSleepThreadCB();
  return 0;
}

static void start_exit_callback(void) {
  /* Priority 0x11, above the main thread's 0x20; 4000 bytes of stack (pspsdk's samples). */
  const SceUID thread = sceKernelCreateThread("pocketlm callbacks", callback_thread, 0x11, 0xFA0, PSP_THREAD_ATTR_USER, NULL);
  if (thread >= 0) sceKernelStartThread(thread, 0, NULL);
}

/* The GU, set up as pspsdk's OSK sample does (the keyboard is drawn over GU frames), with its
 * buffers after the console's frame (psp_port.h). */
static void gu_open(void) {
  sceGuInit();
  sceGuStart(GU_DIRECT, gu_list);
  sceGuDrawBuffer(GU_PSM_8888, (void*)(uintptr_t)PSP_GU_DRAW_OFFSET, PSP_LINE_PIXELS);
  sceGuDispBuffer(PSP_SCREEN_WIDTH, PSP_SCREEN_HEIGHT, (void*)(uintptr_t)PSP_GU_DISPLAY_OFFSET, PSP_LINE_PIXELS);
  sceGuDepthBuffer((void*)(uintptr_t)PSP_GU_DEPTH_OFFSET, PSP_LINE_PIXELS);
  sceGuOffset(2048 - PSP_SCREEN_WIDTH / 2, 2048 - PSP_SCREEN_HEIGHT / 2);
  sceGuViewport(2048, 2048, PSP_SCREEN_WIDTH, PSP_SCREEN_HEIGHT);
  sceGuScissor(0, 0, PSP_SCREEN_WIDTH, PSP_SCREEN_HEIGHT);
  sceGuEnable(GU_SCISSOR_TEST);
  sceGuFinish();
  sceGuSync(GU_SYNC_FINISH, GU_SYNC_WHAT_DONE);
}

/* The OSK's loop: a cleared GU frame each pass, the dialog drawn over it, then the console's
 * frame shown again (the story so far). Returns 0 with the text in out, -1 when cancelled or
 * when the keyboard does not start. */
static int ask_prompt(uint16_t* out, uint32_t* console_frame) {
  static uint16_t desc[] = {'P', 'r', 'o', 'm', 'p', 't', 0};
  static uint16_t intext[] = {'O', 'n', 'c', 'e', ' ', 'u', 'p', 'o', 'n', ' ', 'a', ' ', 't', 'i', 'm', 'e', 0};
  SceUtilityOskData data;
  SceUtilityOskParams params;
  memset(&data, 0, sizeof data);
  data.language = PSP_UTILITY_OSK_LANGUAGE_DEFAULT;
  data.lines = 1;
  data.unk_24 = 1; /* as pspsdk's OSK sample sets it */
  data.inputtype = PSP_UTILITY_OSK_INPUTTYPE_ALL;
  data.desc = desc;
  data.intext = intext;
  data.outtextlength = OSK_UNITS;
  data.outtextlimit = OSK_UNITS - 1;
  data.outtext = out;
  memset(&params, 0, sizeof params);
  params.base.size = sizeof params;
  sceUtilityGetSystemParamInt(PSP_SYSTEMPARAM_ID_INT_LANGUAGE, &params.base.language);
  sceUtilityGetSystemParamInt(PSP_SYSTEMPARAM_ID_INT_UNKNOWN, &params.base.buttonSwap);
  params.base.graphicsThread = 17;
  params.base.accessThread = 19;
  params.base.fontThread = 18;
  params.base.soundThread = 16;
  params.datacount = 1;
  params.data = &data;
  sceGuDisplay(GU_TRUE);
  const int started = sceUtilityOskInitStart(&params);
  while (started >= 0) {
    sceGuStart(GU_DIRECT, gu_list);
    sceGuClearColor(0);
    sceGuClearDepth(0);
    sceGuClear(GU_COLOR_BUFFER_BIT | GU_DEPTH_BUFFER_BIT);
    sceGuFinish();
    sceGuSync(GU_SYNC_FINISH, GU_SYNC_WHAT_DONE);
    const int status = sceUtilityOskGetStatus();
    if (status == PSP_UTILITY_DIALOG_NONE) break;
    if (status == PSP_UTILITY_DIALOG_VISIBLE) sceUtilityOskUpdate(1);
    if (status == PSP_UTILITY_DIALOG_QUIT) sceUtilityOskShutdownStart();
    sceDisplayWaitVblankStart();
    sceGuSwapBuffers();
  }
  sceDisplaySetMode(PSP_DISPLAY_MODE_LCD, PSP_SCREEN_WIDTH, PSP_SCREEN_HEIGHT);
  sceDisplaySetFrameBuf(console_frame, PSP_LINE_PIXELS, PSP_DISPLAY_PIXEL_FORMAT_8888, PSP_DISPLAY_SETBUF_NEXTFRAME);
  return started < 0 || data.result == PSP_UTILITY_OSK_RESULT_CANCELLED ? -1 : 0;
}

/* The message stays on screen until HOME quits (the callback thread). */
static void __attribute__((noreturn)) fail(const char* what, const char* message) {
  pspDebugScreenPrintf("%s: %s\n", what, message);
  for (;;) sceKernelSleepThread();
}

int main(int argc, char* argv[]) {
  static psp_file file;
  static pocketlm_config config;
  static pocketlm_memory_plan plan = {sizeof plan};
  static pocketlm_chat_config chat;
  static uint16_t outtext[OSK_UNITS];
  static char message[3 * OSK_UNITS + 1];
  static char own_path[256];
  set_fpu_no_traps();
  start_exit_callback();
  pspDebugScreenInit();
  uint32_t* vram = (uint32_t*)(0x40000000u | (uintptr_t)sceGeEdramGetAddr());
  gu_open();

  /* model.gguf beside the EBOOT (ms0: or a PSP Go's ef0:), else on the memory stick. */
  const char* path = psp_model_path(argc > 0 ? argv[0] : NULL, own_path, sizeof own_path);
  SceUID fd = sceIoOpen(path, PSP_O_RDONLY, 0);
  if (fd < 0 && path == own_path) fd = sceIoOpen(path = PSP_DEFAULT_MODEL_PATH, PSP_O_RDONLY, 0);
  if (fd < 0) fail(path, "cannot open");
  file.seek = io_seek;
  file.read = io_read;
  file.fd = (void*)(intptr_t)fd;
  file.position = -1;
  file.size = (uint64_t)sceIoLseek(fd, 0, PSP_SEEK_END);
  psp_config(&config, (uint64_t)POCKETLM_HEAP_TIER_BYTES);
  config.model = psp_file_storage(&file, path);
  /* A multi-turn chat whose kv cache is kept between turns (console --device psp shows it). */
  config.chat = 1;
  config.chat_message_bytes = sizeof message;

  pocketlm_session* session = NULL;
  if (pocketlm_create(malloc(pocketlm_session_bytes()), pocketlm_session_bytes(), &session))
    fail("session", pocketlm_last_error(NULL));
  if (pocketlm_plan(session, &config, &plan)) fail("plan", pocketlm_last_error(session));
  config.tier_buffer_bytes[0] = (size_t)plan.tiers[0].bytes;
  config.tier_buffers[0] = memalign(POCKETLM_ALIGNMENT, config.tier_buffer_bytes[0]);
  if (pocketlm_open(session, &config)) fail("open", pocketlm_last_error(session));
  if (psp_console_open(malloc(pocketlm_console_bytes()), pocketlm_console_bytes(), vram, &g_console))
    fail("console", pocketlm_last_error(NULL));

  pocketlm_chat_config_defaults(&chat);
  chat.sampler.temperature = 0.8f;
  chat.sampler.topp = 0.9f;
  chat.sampler.seed = (uint64_t)sceKernelGetSystemTimeWide() | 1u;
  chat.max_reply = 64;
  if (pocketlm_chat_begin(session, &chat)) fail("chat", pocketlm_last_error(session));
  /* One turn per OSK entry, until the OSK is cancelled. */
  while (ask_prompt(outtext, vram) == 0) {
    size_t len = 0;
    if (psp_osk_prompt(outtext, OSK_UNITS, message, sizeof message, &len)) fail("prompt", pocketlm_last_error(NULL));
    pocketlm_console_write(g_console, "> ", 2);
    pocketlm_console_write(g_console, message, len);
    pocketlm_console_write(g_console, "\n", 1);
    pocketlm_chat_stats stats = {sizeof stats};
    const pocketlm_status st = pocketlm_chat_turn(session, message, len, on_token, NULL, &stats);
    if (st == POCKETLM_INVALID_ARGUMENT) {  /* a message that does not fit: refused, the chat goes on */
      pocketlm_console_write(g_console, pocketlm_last_error(session), strlen(pocketlm_last_error(session)));
    } else if (st != POCKETLM_OK) {
      fail("turn", pocketlm_last_error(session));
    }
    pocketlm_console_write(g_console, "\n", 1);
  }
  pocketlm_close(session);
  sceKernelExitGame();
  return 0;
}
