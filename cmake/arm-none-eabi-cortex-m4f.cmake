# Bare-metal build for a Cortex-M4F (ARMv7E-M, single-precision FPU) with Debian's
# arm-none-eabi toolchain and newlib-nano:
#   apt-get install gcc-arm-none-eabi libnewlib-arm-none-eabi libstdc++-arm-none-eabi-newlib
#   cmake -S . -B build-cortex-m -DCMAKE_TOOLCHAIN_FILE=cmake/arm-none-eabi-cortex-m4f.cmake
# (`make check-bare-metal` does this.) It proves the engine library needs no OS: no threads,
# files, clocks or printf family, and every stack frame within a bound (-Wstack-usage).
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR arm)

set(CMAKE_C_COMPILER arm-none-eabi-gcc)
set(CMAKE_CXX_COMPILER arm-none-eabi-g++)
# No OS to run a test executable in while configuring: CMake's compiler checks link a library.
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)

set(POCKETLM_CPU_FLAGS "-mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16")
set(CMAKE_C_FLAGS_INIT "${POCKETLM_CPU_FLAGS}")
set(CMAKE_CXX_FLAGS_INIT "${POCKETLM_CPU_FLAGS}")
# newlib-nano (no %llu, no %f: the engine formats its own messages); the firmware adds
# semihosting system calls (src/ports/cortex_m).
set(CMAKE_EXE_LINKER_FLAGS_INIT "${POCKETLM_CPU_FLAGS} --specs=nano.specs")

set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(POCKETLM_BARE_METAL ON CACHE BOOL "engine library and the bare-metal link check only" FORCE)
set(POCKETLM_BOARD cortex_m CACHE STRING "the board folder of src/ports/" FORCE)
