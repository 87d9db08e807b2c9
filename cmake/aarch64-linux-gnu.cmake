# Cross build for 64-bit ARM Linux with Debian's cross toolchain, tests run under qemu-user:
#   apt-get install g++-aarch64-linux-gnu qemu-user-static googletest
#   cmake -S . -B build-aarch64 -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake
# (`make test-aarch64` does this and runs the tests.) GoogleTest is then built from Debian's
# source package (/usr/src/googletest) as part of the build, Google Benchmark is skipped, and
# CLI11 and nlohmann-json are header-only, read from the host's /usr/include.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)

set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)

# Target libraries come from the cross sysroot only; programs run on the build host. Header
# and CMake package lookups may also see the host's, for the header-only dependencies.
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)

# Target programs (tests, GoogleTest's discovery step) run through user-mode qemu; -L points
# it at the cross sysroot for the dynamically linked test executables.
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64-static -L /usr/aarch64-linux-gnu)
