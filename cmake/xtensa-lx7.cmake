# Bare-metal build for an Xtensa LX7 (the ESP32-S3's ISA), run on QEMU's sim machine with the
# de233_fpu core (src/ports/xtensa_sim), with Debian's packages only:
#   apt-get install clang-22 llvm-22 libc++-22-dev picolibc-xtensa-lx106-elf binutils-xtensa-lx106 \
#                   gcc-xtensa-lx106 qemu-system-misc newlib-source gcc-12-source
#   cmake -S . -B build-xtensa -DCMAKE_TOOLCHAIN_FILE=cmake/xtensa-lx7.cmake
# - Compiler: clang-22's Xtensa backend through src/ports/xtensa_sim/xtensa-clang (it mends the
#   literal pools LLVM 22 misplaces). The frontend takes no -mcpu, so the ISA options are given as
#   target features, each one de233_fpu has (QEMU's core-de233_fpu/core-isa.h XCHAL_HAVE_*):
#   windowed registers, the FPU, density, loops, booleans, SEXT, NSA, CLAMPS, MIN/MAX, MAC16, MUL16,
#   MUL32, DIV32, S32C1I, THREADPTR; never mul32high (the core has no MULUH/MULSH). The privileged
#   options (exceptions, interrupts, relocatable vectors, timers, coprocessor) only let the reset
#   code's asm name their registers and instructions.
# - C library: none is packaged for windowed Xtensa (picolibc-xtensa-lx106-elf's libc.a is the
#   ESP8266's call0 ABI): picolibc's headers only, after the compiler's own (-idirafter; and
#   -nostdlibinc, or clang's generic target reads the host's /usr/include), and
#   src/ports/freestanding for the functions.
# - Linker: xtensa-lx106-elf-gcc as the driver of binutils' ld (ld.lld has no Xtensa), with
#   -nostdlib and --no-relax: LLVM's objects carry none of the property tables ld's relaxation reads.
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR xtensa)

set(CMAKE_C_COMPILER ${CMAKE_CURRENT_LIST_DIR}/../src/ports/xtensa_sim/xtensa-clang)
set(CMAKE_CXX_COMPILER ${CMAKE_CURRENT_LIST_DIR}/../src/ports/xtensa_sim/xtensa-clang)
set(CMAKE_ASM_COMPILER clang-22)
set(CMAKE_C_COMPILER_TARGET xtensa)
set(CMAKE_CXX_COMPILER_TARGET xtensa)
set(CMAKE_ASM_COMPILER_TARGET xtensa)
# No OS to run a test executable in while configuring: CMake's compiler checks link a library.
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)

set(features density fp windowed bool loop sext nsa clamps minmax mac16 mul16 mul32 div32 s32c1i threadptr
    exception interrupt rvector timers3 prid debug coprocessor highpriinterrupts miscsr)
set(POCKETLM_CPU_FLAGS "")
foreach(f ${features})
  string(APPEND POCKETLM_CPU_FLAGS " -Xclang -target-feature -Xclang +${f}")
endforeach()
set(libc_include /usr/lib/xtensa-lx106-elf/include)
set(libcxx_include /usr/lib/llvm-22/include/c++/v1)
set(common "${POCKETLM_CPU_FLAGS} -nostdlibinc -ffunction-sections -fdata-sections -ffp-contract=off -idirafter ${libc_include}")
set(CMAKE_C_FLAGS_INIT "${common}")
# libc++'s headers behind src/ports/xtensa/__config_site (no threads, locales or files).
set(CMAKE_CXX_FLAGS_INIT "${common} -nostdinc++ -isystem ${CMAKE_CURRENT_LIST_DIR}/../src/ports/xtensa -isystem ${libcxx_include} -fno-threadsafe-statics")
# -O2, as the ESP-IDF builds the engine (CMake's Release default would add -O3 after an _INIT).
set(CMAKE_C_FLAGS_RELEASE "-O2 -DNDEBUG" CACHE STRING "")
set(CMAKE_CXX_FLAGS_RELEASE "-O2 -DNDEBUG" CACHE STRING "")
# What src/ports/freestanding passes when it asks the compiler for its own headers.
set(POCKETLM_COMPILER_TARGET_FLAGS --target=xtensa)

set(CMAKE_EXE_LINKER_FLAGS_INIT "-nostdlib -Wl,--no-relax")
# The libraries as one group: the engine and src/ports/freestanding need each other (memcpy and
# expf one way, the formatter behind snprintf the other).
set(link_rule "xtensa-lx106-elf-gcc <LINK_FLAGS> <OBJECTS> -o <TARGET> -Wl,--start-group <LINK_LIBRARIES> -Wl,--end-group")
set(CMAKE_C_LINK_EXECUTABLE "${link_rule}")
set(CMAKE_CXX_LINK_EXECUTABLE "${link_rule}")
set(CMAKE_AR llvm-ar-22)
set(CMAKE_RANLIB llvm-ranlib-22)

set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(POCKETLM_BARE_METAL ON CACHE BOOL "engine library and the bare-metal firmware only" FORCE)
set(POCKETLM_BOARD xtensa_sim CACHE STRING "the board folder under src/ports" FORCE)
