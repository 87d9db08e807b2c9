/* Stand-in for pspsdk's pspgu.h (libpspgu): the GU calls and values main.c uses to draw the
 * frames the on-screen keyboard is drawn over. Written here, not copied; checked by
 * scripts/ports/compare-psp-stand-ins. Buffer addresses are offsets from the start of VRAM. */
#ifndef POCKETLM_STAND_IN_PSPGU_H
#define POCKETLM_STAND_IN_PSPGU_H

#ifdef __cplusplus
extern "C" {
#endif

#define GU_TRUE (1)
#define GU_SCISSOR_TEST (2)         /* a state for sceGuEnable */
#define GU_PSM_8888 (3)             /* 32-bit pixels */
#define GU_COLOR_BUFFER_BIT (1)     /* sceGuClear's flags */
#define GU_DEPTH_BUFFER_BIT (4)
#define GU_DIRECT (0)               /* a display list run as it is built */
#define GU_SYNC_FINISH (0)          /* sceGuSync: wait for the list's end */
#define GU_SYNC_WHAT_DONE (0)

int sceGuInit(void);
int sceGuStart(int context_type, void* list);
int sceGuFinish(void);
int sceGuSync(int mode, int what);
void sceGuDrawBuffer(int pixel_format, void* frame, int line_pixels);
void sceGuDispBuffer(int width, int height, void* frame, int line_pixels);
void sceGuDepthBuffer(void* depth, int line_pixels);
void sceGuOffset(unsigned int x, unsigned int y);
void sceGuViewport(int center_x, int center_y, int width, int height);
void sceGuScissor(int x, int y, int width, int height);
void sceGuEnable(int state);
void sceGuClearColor(unsigned int color);
void sceGuClearDepth(unsigned int depth);
void sceGuClear(int flags);
/* Shows the display buffer (GU_TRUE) or nothing. */
int sceGuDisplay(int state);
/* Exchanges the draw and display buffers; returns the new draw buffer. */
void* sceGuSwapBuffers(void);

#ifdef __cplusplus
}
#endif

#endif
