# Bare-metal build for a MIPS32 laid out as a PSP-1000 (src/ports/mips_psp), run on QEMU's Malta
# board (`qemu-system-mipsel -M malta -cpu 24Kf`), with Debian's Linux cross compiler:
#   apt-get install g++-mipsel-linux-gnu qemu-system-mips
#   cmake -S . -B build-psp-mips -DCMAKE_TOOLCHAIN_FILE=cmake/mipsel-psp-baremetal.cmake
# What the flags are for:
# - -march=mips32 -msingle-float: the Allegrex is a MIPS32 with a single-precision FPU, so every
#   double becomes a soft-float call (__adddf3, ...) the soft-double guard can see;
# - -mno-abicalls -fno-pic -G0: no Linux PIC/GOT and no small-data $gp: plain absolute code, as
#   psp-gcc makes (and no _gp to set up);
# - -fno-if-conversion: GCC 12 otherwise emits the integer movt/movf on an FP condition, which
#   binutils 2.40's gas refuses under -msingle-float (scripts/ports/check-psp's header);
# - -ffreestanding -nostdlib: no glibc; src/ports/freestanding is the C/C++ runtime, libm and the
#   soft doubles. Debian's mipsel libgcc.a is hard-double (its __adddf3 is add.d on FPRs, wrong
#   under -msingle-float's GPR doubles), so it is never linked.
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR mips)

set(CMAKE_C_COMPILER mipsel-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER mipsel-linux-gnu-g++)
set(CMAKE_ASM_COMPILER mipsel-linux-gnu-gcc)
# No OS to run a test executable in while configuring: CMake's compiler checks link a library.
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)

set(POCKETLM_CPU_FLAGS "-march=mips32 -msingle-float -mno-abicalls -fno-pic -G0 -ffreestanding -fno-if-conversion")
set(CMAKE_C_FLAGS_INIT "${POCKETLM_CPU_FLAGS}")
set(CMAKE_CXX_FLAGS_INIT "${POCKETLM_CPU_FLAGS} -fno-threadsafe-statics")
set(CMAKE_ASM_FLAGS_INIT "${POCKETLM_CPU_FLAGS}")
# -static -no-pie: Debian's gcc links PIE by default, which a bare-metal image cannot be.
set(CMAKE_EXE_LINKER_FLAGS_INIT "${POCKETLM_CPU_FLAGS} -nostdlib -static -no-pie")
# The engine and the freestanding runtime call each other (memcpy one way, the formatter behind
# snprintf the other): the libraries are searched as one group.
set(CMAKE_CXX_LINK_EXECUTABLE
    "<CMAKE_CXX_COMPILER> <FLAGS> <CMAKE_CXX_LINK_FLAGS> <LINK_FLAGS> <OBJECTS> -o <TARGET> -Wl,--start-group <LINK_LIBRARIES> -Wl,--end-group")

set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(POCKETLM_BARE_METAL ON CACHE BOOL "engine library and the bare-metal firmware only" FORCE)
set(POCKETLM_BOARD mips_psp CACHE STRING "the board folder under src/ports" FORCE)
