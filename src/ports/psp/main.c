/* pocketlm on a Sony PSP: NOT BUILT HERE (no pspdev SDK on the machines that test pocketlm).
 * Reads a GGUF model (with its tokenizer) from the memory stick with sceIo, plans it into the
 * heap, and chats: each on-screen keyboard entry is a turn (the kv cache kept between turns, as
 * `console --device psp` shows), drawn on the debug screen's framebuffer through pocketlm's console. Everything but the SDK calls is psp_port.c, which
 * tests/ports_test.cpp runs on the host; the engine is reached only through pocketlm.h. */
#include <pspctrl.h>
#include <pspdebug.h>
#include <pspdisplay.h>
#include <pspge.h>
#include <pspiofilemgr.h>
#include <pspkernel.h>
#include <psputility.h>
#include <malloc.h> /* memalign */
#include <stdlib.h>
#include <string.h>

#include "psp_port.h"

PSP_MODULE_INFO("pocketlm", PSP_MODULE_USER, 1, 0);
PSP_MAIN_THREAD_ATTR(PSP_THREAD_ATTR_USER | PSP_THREAD_ATTR_VFPU);
/* The heap: the Makefile's HEAP_KB, sized from the plan (README.md). */
PSP_HEAP_SIZE_KB(POCKETLM_HEAP_KB);

#ifndef POCKETLM_MODEL_PATH
#define POCKETLM_MODEL_PATH "ms0:/PSP/GAME/pocketlm/model.gguf"
#endif
#define OSK_UNITS 256

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

/* The OSK's loop: the dialog draws itself over a GU frame; returns 0 with the text in out. */
static int ask_prompt(uint16_t* out) {
  static uint16_t desc[] = {'P', 'r', 'o', 'm', 'p', 't', 0};
  static uint16_t intext[] = {'O', 'n', 'c', 'e', ' ', 'u', 'p', 'o', 'n', ' ', 'a', ' ', 't', 'i', 'm', 'e', 0};
  SceUtilityOskData data;
  SceUtilityOskParams params;
  memset(&data, 0, sizeof data);
  data.language = PSP_UTILITY_OSK_LANGUAGE_DEFAULT;
  data.lines = 1;
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
  if (sceUtilityOskInitStart(&params) < 0) return -1;
  for (;;) {
    const int status = sceUtilityOskGetStatus();
    if (status == PSP_UTILITY_DIALOG_NONE) break;
    if (status == PSP_UTILITY_DIALOG_VISIBLE) sceUtilityOskUpdate(1);
    if (status == PSP_UTILITY_DIALOG_QUIT) sceUtilityOskShutdownStart();
    sceDisplayWaitVblankStart();
  }
  return data.result == PSP_UTILITY_OSK_RESULT_CANCELLED ? -1 : 0;
}

static void fail(const char* what, const char* message) {
  pspDebugScreenPrintf("%s: %s\n", what, message);
  sceKernelSleepThread();
}

int main(void) {
  static psp_file file;
  static pocketlm_config config;
  static pocketlm_memory_plan plan = {sizeof plan};
  static pocketlm_chat_config chat;
  static uint16_t outtext[OSK_UNITS];
  static char message[3 * OSK_UNITS + 1];
  set_fpu_no_traps();
  pspDebugScreenInit();
  uint32_t* vram = (uint32_t*)(0x40000000u | (uint32_t)sceGeEdramGetAddr());

  const SceUID fd = sceIoOpen(POCKETLM_MODEL_PATH, PSP_O_RDONLY, 0);
  if (fd < 0) fail(POCKETLM_MODEL_PATH, "cannot open");
  file.seek = io_seek;
  file.read = io_read;
  file.fd = (void*)(intptr_t)fd;
  file.position = -1;
  file.size = (uint64_t)sceIoLseek(fd, 0, PSP_SEEK_END);
  psp_config(&config, (uint64_t)POCKETLM_HEAP_TIER_BYTES);
  config.model = psp_file_storage(&file, POCKETLM_MODEL_PATH);
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
  while (ask_prompt(outtext) == 0) {
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
  sceKernelSleepThread();
  return 0;
}
