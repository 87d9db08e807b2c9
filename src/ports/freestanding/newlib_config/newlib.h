/* What newlib's configure would write into newlib.h for the few libm files built here
   (src/ports/freestanding/CMakeLists.txt): nothing is configured beyond the defaults. */
#ifndef __NEWLIB_H__
#define __NEWLIB_H__ 1
#include <_newlib_version.h>
#endif
