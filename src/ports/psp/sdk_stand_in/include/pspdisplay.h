/* Stand-in for pspsdk's pspdisplay.h: the display calls and values main.c uses. Written here,
 * not copied; checked by scripts/ports/compare-psp-stand-ins. */
#ifndef POCKETLM_STAND_IN_PSPDISPLAY_H
#define POCKETLM_STAND_IN_PSPDISPLAY_H

#ifdef __cplusplus
extern "C" {
#endif

enum PspDisplayPixelFormats { PSP_DISPLAY_PIXEL_FORMAT_8888 = 3 };
enum PspDisplaySetBufSync { PSP_DISPLAY_SETBUF_NEXTVSYNC = 1 };
/* The older name of the same value. */
#define PSP_DISPLAY_SETBUF_NEXTFRAME PSP_DISPLAY_SETBUF_NEXTVSYNC
enum PspDisplayMode { PSP_DISPLAY_MODE_LCD = 0 };

int sceDisplaySetMode(int mode, int width, int height);
/* Shows the frame at `top` (line_pixels to a line) from the next hsync or vsync (`sync`). */
int sceDisplaySetFrameBuf(void* top, int line_pixels, int pixel_format, int sync);
int sceDisplayWaitVblankStart(void);

#ifdef __cplusplus
}
#endif

#endif
