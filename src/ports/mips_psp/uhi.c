/* The POSIX-style calls the firmware and its storage make (src/ports/firmware/board.h), over UHI
   semihosting (uhi.h): open (descriptors of files on the host; 0-2 are QEMU's console), read,
   write, lseek, close and _exit. C, not C++: glibc's headers, which the cross compiler brings,
   declare some of these noexcept in C++, and the definitions must match them. */
#include <fcntl.h>
#include <stdarg.h>
#include <unistd.h>

#include "ports/mips_psp/uhi.h"

/* glibc's MIPS open flags (<fcntl.h>) to UHI's: they differ from O_CREAT up. */
static long uhi_open_flags(int flags) {
  long out = 0;
  if ((flags & O_ACCMODE) == O_WRONLY) out |= kUhiOpenWrOnly;
  if ((flags & O_ACCMODE) == O_RDWR) out |= kUhiOpenRdWr;
  if (flags & O_APPEND) out |= kUhiOpenAppend;
  if (flags & O_CREAT) out |= kUhiOpenCreat;
  if (flags & O_TRUNC) out |= kUhiOpenTrunc;
  if (flags & O_EXCL) out |= kUhiOpenExcl;
  return out;
}

int open(const char *path, int flags, ...) {
  long mode = 0;
  if (flags & O_CREAT) {
    va_list args;
    va_start(args, flags);
    mode = va_arg(args, int);
    va_end(args);
  }
  return (int)mips_psp_uhi(kUhiOpen, (long)path, uhi_open_flags(flags), mode);
}

int close(int fd) { return (int)mips_psp_uhi(kUhiClose, fd, 0, 0); }

ssize_t read(int fd, void *buf, size_t bytes) { return mips_psp_uhi(kUhiRead, fd, (long)buf, (long)bytes); }

ssize_t write(int fd, const void *buf, size_t bytes) { return mips_psp_uhi(kUhiWrite, fd, (long)buf, (long)bytes); }

/* UHI's offset is one 32-bit register, which QEMU reads as unsigned: offsets from 0 to 2 GiB - 1,
   none negative (the storage seeks to absolute offsets and to the end; the models are far
   smaller). Both symbols exist, lseek (32-bit off_t) and lseek64, whichever _FILE_OFFSET_BITS the caller
   was compiled with; <unistd.h> names one of them `lseek` here. */
static long long uhi_lseek(int fd, long long offset, int whence) {
  if (offset < 0 || offset > 0x7FFFFFFFLL) return -1;
  return mips_psp_uhi(kUhiLseek, fd, (long)offset, whence);
}

off_t lseek(int fd, off_t offset, int whence) { return (off_t)uhi_lseek(fd, offset, whence); }

#if defined(_FILE_OFFSET_BITS) && _FILE_OFFSET_BITS == 64
long lseek_32(int fd, long offset, int whence) __asm__("lseek");
long lseek_32(int fd, long offset, int whence) { return (long)uhi_lseek(fd, offset, whence); }
#else
long long lseek_64(int fd, long long offset, int whence) __asm__("lseek64");
long long lseek_64(int fd, long long offset, int whence) { return uhi_lseek(fd, offset, whence); }
#endif

void _exit(int status) {
  mips_psp_uhi(kUhiExit, status, 0, 0);
  for (;;) {
  }
}
