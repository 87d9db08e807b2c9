// CPU feature dispatch in one place: which backends this build has and which is default.
#include <cstring>

#include "pocketlm/kernels/kernels.h"

namespace pocketlm {

const char* const* kernel_names() {
  static const char* const kNames[] = {"reference", nullptr};
  return kNames;
}

const Kernels* find_kernels(const char* name) {
  if (std::strcmp(name, "reference") == 0) return &reference_kernels();
  return nullptr;
}

const Kernels& default_kernels() { return reference_kernels(); }

}  // namespace pocketlm
