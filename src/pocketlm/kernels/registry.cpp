// CPU feature dispatch in one place: which backends this build has, which this CPU can run,
// and which is the default (the fastest exact one).
#include <cstring>

#include "pocketlm/kernels/kernels.h"

namespace pocketlm {

#if defined(POCKETLM_HAVE_AVX2)
const Kernels& avx2_kernels();  // kernels/avx2.cpp
#endif

namespace {

bool cpu_has_avx2() {
#if defined(POCKETLM_HAVE_AVX2)
  return __builtin_cpu_supports("avx2");
#else
  return false;
#endif
}

}  // namespace

const char* const* kernel_names() {
  static const char* const kNames[] = {
      "reference",
#if defined(POCKETLM_HAVE_AVX2)
      "avx2",
#endif
      nullptr};
  return kNames;
}

const Kernels* find_kernels(const char* name) {
  if (std::strcmp(name, "reference") == 0) return &reference_kernels();
#if defined(POCKETLM_HAVE_AVX2)
  if (std::strcmp(name, "avx2") == 0) return cpu_has_avx2() ? &avx2_kernels() : nullptr;
#endif
  return nullptr;
}

const Kernels& default_kernels() {
#if defined(POCKETLM_HAVE_AVX2)
  if (cpu_has_avx2()) return avx2_kernels();
#endif
  return reference_kernels();
}

}  // namespace pocketlm
