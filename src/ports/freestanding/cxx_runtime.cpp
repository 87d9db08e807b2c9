// What compiled C++ asks of its runtime, for boards without a C++ library
// (src/ports/freestanding/README.md). The firmware hands the engine its memory (the C API's
// session memory and tier buffers), so nothing here allocates: an allocation the engine tries
// anyway (an arena it would own) is refused, which it reports as its one-line error, and
// exceptions do not exist (-fno-exceptions).
#include <cstddef>
#include <new>

#include <unistd.h>

namespace {

[[noreturn]] void die(const char *why, std::size_t length) {
  ::write(1, why, length);
  ::_exit(1);
}

}  // namespace

// The tag the engine's nothrow allocations pass (the C++ library's, where there is one).
namespace std {
const nothrow_t nothrow{};
}

// The nothrow forms refuse: the engine checks for nullptr and says which region it could not get.
void *operator new(std::size_t, const std::nothrow_t &) noexcept { return nullptr; }
void *operator new[](std::size_t, const std::nothrow_t &) noexcept { return nullptr; }
void *operator new(std::size_t, std::align_val_t, const std::nothrow_t &) noexcept { return nullptr; }
void *operator new[](std::size_t, std::align_val_t, const std::nothrow_t &) noexcept { return nullptr; }

// The throwing forms cannot throw here: a call is a bug in the program, and it stops.
void *operator new(std::size_t) {
  static const char kWhy[] = "error: operator new called on a board without a heap\n";
  die(kWhy, sizeof kWhy - 1);
}
void *operator new[](std::size_t size) { return operator new(size); }
void *operator new(std::size_t size, std::align_val_t) { return operator new(size); }

// Nothing was allocated, so there is nothing to free; vtables still name these.
void operator delete(void *) noexcept {}
void operator delete[](void *) noexcept {}
void operator delete(void *, std::size_t) noexcept {}
void operator delete[](void *, std::size_t) noexcept {}
void operator delete(void *, std::align_val_t) noexcept {}
void operator delete[](void *, std::align_val_t) noexcept {}
void operator delete(void *, std::size_t, std::align_val_t) noexcept {}
void operator delete[](void *, std::size_t, std::align_val_t) noexcept {}

extern "C" {

// Static objects' destructors would run at exit; a firmware's program never returns to run them.
void *__dso_handle = nullptr;
int __cxa_atexit(void (*)(void *), void *, void *) { return 0; }
int atexit(void (*)()) { return 0; }

void __cxa_pure_virtual() {
  static const char kWhy[] = "error: pure virtual function called\n";
  die(kWhy, sizeof kWhy - 1);
}

void abort() {
  static const char kWhy[] = "error: abort() called\n";
  die(kWhy, sizeof kWhy - 1);
}

}  // extern "C"
