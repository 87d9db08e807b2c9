# Cross build for 32-bit little-endian MIPS Linux (the PSP's architecture family) with Debian's
# cross toolchain, tests run under qemu-user:
#   apt-get install g++-mipsel-linux-gnu qemu-user-static googletest
#   cmake -S . -B build-mips -DCMAKE_TOOLCHAIN_FILE=cmake/mipsel-linux-gnu.cmake
# (`make test-mips` does this and runs the tests.) There is no SIMD backend for MIPS: the
# default kernels are the portable tiled4 ones (kernels/registry.cpp). size_t is 32 bits here,
# so this build is the one that exercises the engine's 64-bit file offsets and size checks.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR mipsel)

set(CMAKE_C_COMPILER mipsel-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER mipsel-linux-gnu-g++)

# Target libraries come from the cross sysroot only; programs run on the build host. Header
# and CMake package lookups may also see the host's, for the header-only dependencies.
set(CMAKE_FIND_ROOT_PATH /usr/mipsel-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)

# Target programs (tests, GoogleTest's discovery step) run through user-mode qemu; -L points
# it at the cross sysroot for the dynamically linked test executables.
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-mipsel-static -L /usr/mipsel-linux-gnu)
