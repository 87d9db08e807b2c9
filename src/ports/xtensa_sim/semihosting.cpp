// The POSIX-style calls of board.h over QEMU's Xtensa semihosting (`-semihosting`): the `simcall`
// instruction with the call number in a2 and the arguments in a3, a4, a5; the result comes back
// in a2 and the host's errno (translated) in a3. The numbers are those of QEMU's
// target/xtensa/xtensa-semi.c (the Xtensa ISS's): exit 1, read 3, write 4, open 5, close 6,
// lseek 19. QEMU runs the host's open() with the flags as given; O_RDONLY is 0 on both sides.
#include <fcntl.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>

namespace {

enum : std::int32_t { kExit = 1, kRead = 3, kWrite = 4, kOpen = 5, kClose = 6, kLseek = 19 };

std::int32_t simcall(std::int32_t call, std::int32_t a, std::int32_t b, std::int32_t c) {
  register std::int32_t a2 asm("a2") = call;
  register std::int32_t a3 asm("a3") = a;
  register std::int32_t a4 asm("a4") = b;
  register std::int32_t a5 asm("a5") = c;
  // simcall (0x005100): LLVM's assembler has no mnemonic for it. The host reads and writes guest
  // memory behind the compiler's back: hence "memory".
  asm volatile(".byte 0x00, 0x51, 0x00" : "+r"(a2), "+r"(a3) : "r"(a4), "r"(a5) : "memory");
  return a2;
}

std::int32_t address(const void *p) { return static_cast<std::int32_t>(reinterpret_cast<std::uintptr_t>(p)); }

}  // namespace

extern "C" {

int open(const char *path, int flags, ...) { return simcall(kOpen, address(path), flags, 0); }

int close(int fd) { return simcall(kClose, fd, 0, 0); }

ssize_t read(int fd, void *buf, size_t bytes) { return simcall(kRead, fd, address(buf), static_cast<std::int32_t>(bytes)); }

ssize_t write(int fd, const void *buf, size_t bytes) {
  return simcall(kWrite, fd, address(buf), static_cast<std::int32_t>(bytes));
}

off_t lseek(int fd, off_t offset, int whence) { return simcall(kLseek, fd, static_cast<std::int32_t>(offset), whence); }

void _exit(int status) {
  simcall(kExit, status, 0, 0);
  for (;;) {
  }
}

}  // extern "C"
