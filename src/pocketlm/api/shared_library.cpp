// The shared library's own part (cmake/install.cmake): everything else is the engine's archives,
// linked whole. It names the C API version inside the file, so that `strings libpocketlm.so`
// says which header a library was built from.
#include "pocketlm/api/pocketlm.h"

#define POCKETLM_STR2(x) #x
#define POCKETLM_STR(x) POCKETLM_STR2(x)

extern "C" __attribute__((used)) const char pocketlm_library_ident[] =
    "pocketlm C API " POCKETLM_STR(POCKETLM_VERSION_MAJOR) "." POCKETLM_STR(POCKETLM_VERSION_MINOR) "." POCKETLM_STR(
        POCKETLM_VERSION_PATCH);
