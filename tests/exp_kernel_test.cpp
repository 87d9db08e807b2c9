// The kernel table's exp slot: every backend gives the C library's expf bits (std::exp) for
// every float it is tried on (a strided sweep of all 2^32 bit patterns, every pattern near
// glibc's branch points, subnormals and non-finite values, every length 0..40 at unaligned
// addresses), and the x86 vector kernel's probe check rejects a libm that differs from it.
// DISABLED_EveryFloat tries all 2^32 patterns (about 18 s per backend in Release).
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernel_test_support.h"
#include "pocketlm/kernels/kernels.h"
#include "pocketlm/kernels/reference.h"
#if defined(__x86_64__)
#include "pocketlm/kernels/x86_expf.h"
#endif

namespace pocketlm {
namespace {

std::uint32_t bits_of(float f) { return std::bit_cast<std::uint32_t>(f); }
float from_bits(std::uint32_t u) { return std::bit_cast<float>(u); }

// Whether got is want's bits (any NaN matches any NaN).
bool same(float got, float want) { return bits_of(got) == bits_of(want) || (std::isnan(got) && std::isnan(want)); }

// Runs k.exp over the bit patterns [first, first + count * stride) (stride apart, wrapping at
// 2^32) in chunks; fails at the first pattern whose result is not std::exp's.
void expect_exp_over(const Kernels& k, std::uint64_t first, std::uint64_t count, std::uint64_t stride) {
  constexpr std::size_t kChunk = 1 << 16;
  std::vector<float> in(kChunk), out(kChunk);
  for (std::uint64_t done = 0; done < count;) {
    const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(kChunk, count - done));
    for (std::size_t i = 0; i < n; ++i) in[i] = from_bits(static_cast<std::uint32_t>(first + (done + i) * stride));
    out = in;
    k.exp(out.data(), static_cast<int>(n));
    for (std::size_t i = 0; i < n; ++i) {
      const float want = std::exp(in[i]);
      if (!same(out[i], want)) {
        ADD_FAILURE() << k.name << ": exp(" << std::hexfloat << in[i] << ") [bits 0x" << std::hex << bits_of(in[i])
                      << "] = " << std::hexfloat << out[i] << ", expf gives " << want;
        return;
      }
    }
    done += n;
  }
}

class ExpKernel : public ::testing::TestWithParam<const Kernels*> {
 protected:
  const Kernels& k_ = *GetParam();
};

TEST_P(ExpKernel, HasTheSlot) { ASSERT_NE(k_.exp, nullptr); }

// Every 61st bit pattern (odd, so every low-bit residue and both signs come up): 70 million
// values per backend.
TEST_P(ExpKernel, StridedSweepOfAllFloats) {
  constexpr std::uint64_t kStride = 61;
  expect_exp_over(k_, 0, ((std::uint64_t{1} << 32) + kStride - 1) / kStride, kStride);
}

// Every pattern within 2^15 of glibc's branch points (|x| = 88, log(FLT_MAX), log of the
// smallest normal and of 2^-149, 2^-150), of 0 (subnormals of both signs), of the infinities
// (the largest finite floats and the NaNs above them) and of the quiet-NaN boundary.
TEST_P(ExpKernel, EveryFloatNearTheBranchPoints) {
  constexpr std::uint32_t kWindow = 1 << 15;
  const float points[] = {88.0f, -88.0f, 0x1.62e42ep6f, -0x1.5d589ep6f /* -87.33654 */, -0x1.9d1d9ep6f,
                          -0x1.9fe368p6f, 0.0f, -0.0f, std::numeric_limits<float>::infinity(),
                          -std::numeric_limits<float>::infinity()};
  for (float p : points) expect_exp_over(k_, bits_of(p) - kWindow, 2 * kWindow, 1);
  for (std::uint32_t nan : {0x7fc00000u, 0xffc00000u, 0x7fffffffu, 0xffffffffu})
    expect_exp_over(k_, nan - kWindow, 2 * kWindow, 1);
  // Every subnormal's low end, both signs, and the patterns past them into the normals.
  expect_exp_over(k_, 0, 1 << 20, 1);
  expect_exp_over(k_, 0x80000000u, 1 << 20, 1);
}

// Lengths 0..40 (the vector backends' tails) at every offset of a 32-byte line; special values
// in every position of a vector; the floats around the span are left alone.
TEST_P(ExpKernel, EveryLengthAndAlignment) {
  const float values[] = {-3.5f, 0.25f, 88.5f, -100.0f, std::numeric_limits<float>::quiet_NaN(), 1e-40f, -0.0f,
                          -std::numeric_limits<float>::infinity(), 10.0f, -20.0f, 88.7f, -103.5f, 0.0f};
  constexpr int kValues = sizeof values / sizeof values[0];
  constexpr float kGuard = 12345.0f;
  alignas(32) float buf[64];
  for (int offset = 0; offset < 8; ++offset) {
    for (int n = 0; n <= 40; ++n) {
      for (int rot = 0; rot < kValues; rot += 5) {
        for (float& v : buf) v = kGuard;
        for (int i = 0; i < n; ++i) buf[offset + i] = values[(i + rot + n) % kValues];
        k_.exp(buf + offset, n);
        for (int i = 0; i < 64; ++i) {
          const bool inside = i >= offset && i < offset + n;
          const float want = inside ? std::exp(values[(i - offset + rot + n) % kValues]) : kGuard;
          ASSERT_TRUE(same(buf[i], want)) << k_.name << " offset " << offset << " n " << n << " index " << i << ": "
                                          << buf[i] << ", want " << want;
        }
      }
    }
  }
}

// exp_sum: the same values and the same sum bits as run.c's loop (reference::exp_sum) for
// softmax-like rows, rows reaching glibc's special range (x - max below -88, -inf, NaN), every
// length to past a few 64-value blocks, and a vocabulary.
TEST_P(ExpKernel, ExpSumIsRunCsLoop) {
  ASSERT_NE(k_.exp_sum, nullptr);
  std::mt19937 rng(9);
  std::normal_distribution<float> logit(0.0f, 4.0f);
  const float odd[] = {-std::numeric_limits<float>::infinity(), -200.0f, -90.0f, 30.0f,
                       std::numeric_limits<float>::quiet_NaN()};
  auto check = [&](int n, int odd_every) {
    std::vector<float> x(static_cast<std::size_t>(n));
    for (float& v : x) v = logit(rng);
    if (odd_every)
      for (std::size_t i = 0; i < x.size(); i += static_cast<std::size_t>(odd_every)) x[i] = odd[rng() % 5];
    float max = -std::numeric_limits<float>::infinity();
    for (float v : x) max = v > max ? v : max;
    std::vector<float> want = x, got = x;
    const float want_sum = reference::exp_sum(want.data(), n, max);
    const float got_sum = k_.exp_sum(got.data(), n, max);
    ASSERT_TRUE(same(got_sum, want_sum)) << k_.name << " n " << n << ": sum " << got_sum << ", want " << want_sum;
    for (int i = 0; i < n; ++i)
      ASSERT_TRUE(same(got[static_cast<std::size_t>(i)], want[static_cast<std::size_t>(i)])) << k_.name << " n " << n << " i " << i;
  };
  for (int n = 0; n <= 200; ++n) check(n, n % 3 ? 0 : 7);
  check(32000, 0);
  check(32000, 101);
}

// Terms that are exact ties on the running sum's grid: after expf(0) = 1 the sum is in [1, 2)
// (grid steps of 2^-23). Odd multiples of 2^-24 are a whole number of steps and a half, so
// whether they round up depends on the parity of the sum before them, which odd multiples of
// 2^-23 flip. A vector backend must not add such a step at once.
TEST_P(ExpKernel, ExpSumTiesOnTheSumsGrid) {
  std::vector<float> halves, wholes;  // x < 0 with expf(x) = (2k + 1) 2^-24, resp. (2k + 1) 2^-23
  for (float x = -5.2f; (halves.size() < 48 || wholes.size() < 48) && x < -4.0f; x = std::nextafter(x, 0.0f)) {
    const double scaled = std::ldexp(static_cast<double>(std::exp(x)), 24);
    if (scaled != std::floor(scaled)) continue;
    if (std::fmod(scaled, 2.0) == 1.0 && halves.size() < 48) halves.push_back(x);
    if (std::fmod(scaled, 4.0) == 2.0 && wholes.size() < 48) wholes.push_back(x);
  }
  ASSERT_EQ(halves.size(), 48u);
  ASSERT_EQ(wholes.size(), 48u);
  std::vector<float> want(96), got;
  want[0] = 0.0f;
  for (std::size_t i = 1; i < want.size(); ++i) want[i] = i % 2 ? halves[i / 2] : wholes[i / 2 - 1];
  got = want;
  const float want_sum = reference::exp_sum(want.data(), 96, 0.0f);
  const float got_sum = k_.exp_sum(got.data(), 96, 0.0f);
  EXPECT_EQ(bits_of(got_sum), bits_of(want_sum)) << k_.name << ": " << got_sum << ", want " << want_sum;
  for (int i = 0; i < 96; ++i) ASSERT_EQ(bits_of(got[static_cast<std::size_t>(i)]), bits_of(want[static_cast<std::size_t>(i)]));
}

// All 2^32 patterns; run by hand (--gtest_also_run_disabled_tests). Backends whose slot is the
// reference loop are skipped: that loop is std::exp by definition.
TEST_P(ExpKernel, DISABLED_EveryFloat) {
  if (k_.exp == reference::exp && &k_ != &reference_kernels()) GTEST_SKIP() << k_.name << " uses reference::exp";
  expect_exp_over(k_, 0, std::uint64_t{1} << 32, 1);
}

INSTANTIATE_TEST_SUITE_P(Backends, ExpKernel, ::testing::ValuesIn(test::available_backends()),
                         [](const auto& info) { return test::backend_test_name(info.param); });

#if defined(__x86_64__)

bool cpu_has_fma() { return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"); }

float std_exp(float x) { return std::exp(x); }

// std::exp except at one input, where it returns `wrong`.
std::uint32_t g_input;
float g_wrong;
float exp_wrong_at_one_input(float x) { return bits_of(x) == g_input ? g_wrong : std::exp(x); }

bool cpu_has_avx512f() { return cpu_has_fma() && __builtin_cpu_supports("avx512f"); }

// The x86 vector kernels this CPU can run, each as a kernel table of its own, so that the
// sweeps above run on both even where the avx2 table installs only one; each only where its
// probe agrees with this process's expf, as the engine installs it. (Under QEMU's TCG,
// scripts/test-cpu, the emulated vector FMA rounds apart from glibc's scalar expf: the probe
// refuses the kernel, the engine uses reference::exp, and ExpFmaProbe tests that.)
Kernels exp_table(const char* name, ExpFn exp, ExpSumFn exp_sum) {
  Kernels k = reference_kernels();
  k.name = name;
  k.exp = exp;
  k.exp_sum = exp_sum;
  return k;
}
std::vector<const Kernels*> vector_exp_tables() {
  static const Kernels fma = exp_table("exp_fma", x86::exp_fma, x86::exp_sum_fma);
  static const Kernels avx512 = exp_table("exp_avx512", x86::exp_avx512, x86::exp_sum_avx512);
  std::vector<const Kernels*> tables;
  if (cpu_has_fma() && x86::exp_kernel_matches(x86::exp_fma, std_exp)) tables.push_back(&fma);
  if (cpu_has_avx512f() && x86::exp_kernel_matches(x86::exp_avx512, std_exp)) tables.push_back(&avx512);
  return tables;
}
INSTANTIATE_TEST_SUITE_P(VectorKernels, ExpKernel, ::testing::ValuesIn(vector_exp_tables()),
                         [](const auto& info) { return test::backend_test_name(info.param); });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(ExpKernel);

// The slot is the widest vector kernel of the table's own instruction set whose probe agrees
// with this process's expf: exp_fma for avx2 and avxvnni even on an AVX-512 CPU (so that
// `--kernels avx2` runs what an AVX2-only CPU would), exp_avx512 first for the avx512 tables.
TEST(ExpFmaProbe, SlotIsTheTablesOwnVectorKernelOnlyWhenTheProbeAgrees) {
  ExpFn narrow = reference::exp;
  if (cpu_has_fma() && x86::exp_kernel_matches(x86::exp_fma, std_exp)) narrow = x86::exp_fma;
  ExpFn wide = narrow;
  if (cpu_has_fma() && cpu_has_avx512f() && x86::exp_kernel_matches(x86::exp_avx512, std_exp)) wide = x86::exp_avx512;
  for (const char* name : {"avx2", "avxvnni", "avx512"}) {
    const Kernels* k = find_kernels(name);
    if (!k) continue;
    const ExpFn want = std::string(name) == "avx512" ? wide : narrow;
    EXPECT_EQ(k->exp, want) << name;
    const ExpSumFn want_sum = want == x86::exp_avx512 ? x86::exp_sum_avx512
                              : want == x86::exp_fma  ? x86::exp_sum_fma
                                                      : reference::exp_sum;
    EXPECT_EQ(k->exp_sum, want_sum) << name;
  }
  if (narrow == reference::exp) std::printf("note: this libm's expf is not glibc's __expf_fma; the exp slot is reference::exp\n");
}

// A libm one ulp off at a single input of the probe set must fail the check, for each vector
// kernel: the inputs where only the fused multiply-adds give glibc's value (there a libm
// without them, or another compiler's contraction, is one ulp lower), a value between the
// sweep's, an edge and a special value.
TEST(ExpFmaProbe, RejectsALibmOneUlpOffAtOneProbeInput) {
  if (!cpu_has_fma()) GTEST_SKIP() << "no FMA: the vector kernels are never used";
  if (!x86::exp_kernel_matches(x86::exp_fma, std_exp)) GTEST_SKIP() << "this libm's expf is not __expf_fma";
  struct Case {
    std::uint32_t input;
    float wrong;  // 0: one ulp above expf
  } cases[] = {
      {0x4202422f, 0x1.f93e36p+46f},  // what the algorithm gives unfused
      {0xc27c65d9, 0x1.f45324p-92f},
      {bits_of(1.0f), 0.0f},          // the padding between the probe groups
      {0x42afffff, 0.0f},             // just below 88: the last main-path value
      {bits_of(-104.0f), 0.0f},       // the first sweep value (special path, expf 0)
      {bits_of(88.0f), 0.0f},         // special path, computed by std::exp in the kernel
      {bits_of(static_cast<float>(-104.0 + 193.0 * 1000 / 4095)), 0.0f},  // a sweep value
  };
  for (const Kernels* table : vector_exp_tables()) {
    const ExpFn kernel = table->exp;
    for (const Case& c : cases) {
      g_input = c.input;
      const float right = std::exp(from_bits(c.input));
      g_wrong = c.wrong != 0.0f ? c.wrong : std::nextafter(right, std::numeric_limits<float>::infinity());
      ASSERT_NE(bits_of(g_wrong), bits_of(right));
      EXPECT_FALSE(x86::exp_kernel_matches(kernel, exp_wrong_at_one_input))
          << table->name << ": a libm wrong at " << std::hexfloat << from_bits(c.input) << " passed the probe";
    }
    // And a value outside the probe set changes nothing.
    g_input = bits_of(0.123456789f);
    g_wrong = 0.0f;
    EXPECT_TRUE(x86::exp_kernel_matches(kernel, exp_wrong_at_one_input)) << table->name;
  }
}

#endif  // __x86_64__

}  // namespace
}  // namespace pocketlm
