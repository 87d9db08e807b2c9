// CPU feature dispatch in one place: which backends this build has, which this CPU can run,
// and which is the default (the fastest exact one).
#include <cstring>
#if defined(POCKETLM_HAVE_AVX2)
#include <cpuid.h>
#endif

#include "pocketlm/kernels/kernels.h"

namespace pocketlm {

const Kernels& tiled4_kernels();  // kernels/tiled4.cpp: portable, always compiled and available
#if defined(POCKETLM_HAVE_AVX2)
const Kernels& avx2_kernels();     // kernels/avx2.cpp
const Kernels& avxvnni_kernels();  // kernels/avxvnni.cpp
const Kernels& avx512_kernels();      // kernels/avx512.cpp
const Kernels& avx512vnni_kernels();  // kernels/avx512vnni.cpp: the same backend, vpdpbusd
#endif
#if defined(POCKETLM_HAVE_NEON)
const Kernels& neon_kernels();  // kernels/neon.cpp; AArch64 always has Advanced SIMD
#endif
#if defined(POCKETLM_HAVE_CORTEX_M4)
const Kernels& cortex_m4_kernels();  // kernels/cortex_m4.cpp; the build targets a DSP-extension core
#endif

namespace {

// The CPU's features are read once per process (thread-safe statics): CPUID traps to the
// hypervisor in a VM and costs microseconds there, and default_kernels() is asked per session
// and by tests and benchmarks in loops.
[[maybe_unused]] bool cpu_has_avx2() {  // unused where no x86 backend is compiled
#if defined(POCKETLM_HAVE_AVX2)
  static const bool has = [] {
    // The avx2 backend also converts fp16 block scales with F16C (every AVX2 CPU has it):
    // CPUID leaf 1, ECX bit 29 (clang's __builtin_cpu_supports does not know "f16c").
    unsigned a = 0, b = 0, c = 0, d = 0;
    const bool f16c = __get_cpuid(1, &a, &b, &c, &d) && (c & (1u << 29)) != 0;
    return __builtin_cpu_supports("avx2") && f16c;
  }();
  return has;
#else
  return false;
#endif
}

[[maybe_unused]] bool cpu_has_avxvnni() {
#if defined(POCKETLM_HAVE_AVX2)
  static const bool has = [] {
    // AVX-VNNI (the VEX-encoded vpdpbusd): CPUID leaf 7, sub-leaf 1, EAX bit 4.
    unsigned a = 0, b = 0, c = 0, d = 0;
    return cpu_has_avx2() && __get_cpuid_count(7, 1, &a, &b, &c, &d) && (a & (1u << 4)) != 0;
  }();
  return has;
#else
  return false;
#endif
}

[[maybe_unused]] bool cpu_has_avx512() {
#if defined(POCKETLM_HAVE_AVX2)
  // AVX-512F, BW and VL, with the OS saving the zmm and mask registers (the builtin checks XCR0).
  static const bool has = cpu_has_avx2() && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                          __builtin_cpu_supports("avx512vl");
  return has;
#else
  return false;
#endif
}

#if defined(POCKETLM_HAVE_AVX2)
// The avx512 backend, its int8 matmuls on vpdpbusd when the CPU has AVX512_VNNI.
const Kernels& avx512_for_cpu() {
  static const bool vnni = __builtin_cpu_supports("avx512vnni");
  return vnni ? avx512vnni_kernels() : avx512_kernels();
}
#endif

}  // namespace

Status check_kernels_cover(const Kernels& kernels, TensorType type, const char* tensor) {
  const TensorType act = type_traits(type).activation;
  const bool quantizes = type_traits(act).quantize != nullptr;
  if (!kernels.matmul[type_index(type)] || (quantizes && !kernels.quantize_act[type_index(act)]))
    return Status::error(StatusCode::kUnsupported, "kernels = %s: no %s matmul for tensor %s (type %s)", kernels.name,
                         type_name(type), tensor, type_name(type));
  return Status();
}

namespace {

bool always() { return true; }

// One row per backend, in the order help texts list them: its name, whether this CPU can run
// it (checked before its table is touched: a table is built from its own instructions), its
// table, and its rank as the default (the highest available rank wins; 0 = never the default).
// A new backend is one row here and its file (src/pocketlm/CMakeLists.txt adds it for its ISA).
struct Backend {
  const char* name;
  bool (*available)();
  const Kernels& (*table)();
  int default_rank;
};
constexpr Backend kBackends[] = {
    {"reference", always, reference_kernels, 0},
    // Portable and exact, faster than the reference loops: the default where no SIMD backend is
    // (32-bit MIPS, Xtensa, x86 without AVX2).
    {"tiled4", always, tiled4_kernels, 1},
#if defined(POCKETLM_HAVE_AVX2)
    {"avx2", cpu_has_avx2, avx2_kernels, 2},
    {"avxvnni", cpu_has_avxvnni, avxvnni_kernels, 3},
    {"avx512", cpu_has_avx512, avx512_for_cpu, 4},
#endif
#if defined(POCKETLM_HAVE_NEON)
    {"neon", always, neon_kernels, 2},  // AArch64 always has Advanced SIMD
#endif
#if defined(POCKETLM_HAVE_CORTEX_M4)
    {"cortex_m4", always, cortex_m4_kernels, 2},  // the build targets a DSP-extension core
#endif
};
constexpr int kBackendCount = static_cast<int>(sizeof kBackends / sizeof kBackends[0]);

}  // namespace

const char* const* kernel_names() {
  static const auto kNames = [] {
    struct Names {
      const char* v[kBackendCount + 1] = {};
    } n;
    for (int i = 0; i < kBackendCount; ++i) n.v[i] = kBackends[i].name;
    return n;
  }();
  return kNames.v;
}

const Kernels* find_kernels(const char* name) {
  for (const Backend& b : kBackends)
    if (std::strcmp(name, b.name) == 0) return b.available() ? &b.table() : nullptr;
  return nullptr;
}

const KernelVariant* kernel_variants() {
  // Filled once (thread-safe static): each entry only after its CPU check, so a table built
  // with instructions this CPU lacks is never constructed.
  static const auto kVariants = [] {
    struct Table {
      KernelVariant v[16] = {};
    } t;
    int n = 0;
    for (const char* const* name = kernel_names(); *name; ++name)
      if (const Kernels* k = find_kernels(*name)) t.v[n++] = {*name, k};
#if defined(POCKETLM_HAVE_AVX2)
    if (cpu_has_avx512() && &avx512_for_cpu() != &avx512_kernels()) t.v[n++] = {"avx512_maddubs", &avx512_kernels()};
#endif
    return t;
  }();
  return kVariants.v;
}

const Kernels& default_kernels() {
  const Backend* best = &kBackends[0];
  for (const Backend& b : kBackends)
    if (b.default_rank > best->default_rank && b.available()) best = &b;
  return best->table();
}

}  // namespace pocketlm
