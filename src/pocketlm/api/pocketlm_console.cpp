// The C API's console (api/pocketlm.h) over ui::Console with the build's font (kConsoleFont,
// the pocketlm_console_font library): kept in its own file so that a program without a screen
// links neither.
#include <cstdint>
#include <new>

#include "pocketlm/api/c_error.h"
#include "pocketlm/api/pocketlm.h"
#include "pocketlm/ui/console.h"

struct pocketlm_console {
  pocketlm::Console console;
};

using pocketlm::Status;
using pocketlm::StatusCode;
using pocketlm::api::global_status;

extern "C" {

size_t pocketlm_console_bytes(void) { return sizeof(pocketlm_console) + POCKETLM_ALIGNMENT - 1; }

pocketlm_status pocketlm_console_create(void* memory, size_t bytes, uint32_t* pixels, int width, int height,
                                        int stride, uint32_t background, uint32_t foreground,
                                        pocketlm_console** out) {
  if (!out) return global_status(Status::error(StatusCode::kInvalidArgument, "pocketlm_console_create: out: null"));
  *out = nullptr;
  if (!memory || !pixels)
    return global_status(Status::error(StatusCode::kInvalidArgument, "pocketlm_console_create: %s: null",
                                       !memory ? "memory" : "pixels"));
  void* at = nullptr;
  if (!pocketlm::api::align_within(memory, bytes, sizeof(pocketlm_console), &at))
    return global_status(Status::error(StatusCode::kOutOfMemory,
                                       "pocketlm_console_create: bytes = %zu: a console needs %zu (pocketlm_console_bytes())",
                                       bytes, pocketlm_console_bytes()));
  pocketlm_console* c = new (at) pocketlm_console();
  const Status st = c->console.init(pocketlm::Framebuffer{pixels, width, height, stride}, &pocketlm::kConsoleFont,
                                    background, foreground);
  if (!st.ok()) {
    c->~pocketlm_console();
    return global_status(st);
  }
  *out = c;
  return global_status(Status());
}

void pocketlm_console_write(pocketlm_console* c, const char* text, size_t len) {
  if (c && text) c->console.write(text, len);
}

void pocketlm_console_set_color(pocketlm_console* c, uint32_t foreground) {
  if (c) c->console.set_color(foreground);
}

void pocketlm_console_clear(pocketlm_console* c) {
  if (c) c->console.clear();
}

int pocketlm_console_columns(const pocketlm_console* c) { return c ? c->console.columns() : 0; }
int pocketlm_console_rows(const pocketlm_console* c) { return c ? c->console.rows() : 0; }

}  // extern "C"
