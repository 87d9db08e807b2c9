// A firmware-shaped program for a Cortex-M4F, laid out like an ESP32-S3 (mps2_an386.ld): the
// session's tiers are the device profile's (device_profile.cmake: internal SRAM, PSRAM, flash),
// each RAM tier a static buffer of the profile's capacity in its own memory region, and the model
// is read through a Storage: an image linked into code memory as flash would hold it, or a file on
// the host through semihosting when it is larger than the board's 4 MiB of code memory (the
// ESP32-shaped PLE model). Text goes out through newlib's semihosting stdout.
//
// `make test-bare-metal` runs it under QEMU's mps2-an386 with `-icount shift=0` and checks its
// tokens against the golden ones (scripts/run-firmware-golden). It prints what a device estimate
// needs: the instructions of prefill and decode (SysTick counts them, instruction_clock.h), the
// bytes a decode token reads from storage, and the deepest stack the engine used (the ESP-IDF port
// runs it in an 8 KiB main task; IDF's default of 3.5 KiB holds the llama2.c files but not a GGUF
// file's parse). It also checks the FPU's sticky exception flags: invalid, divide-by-zero or
// overflow raised anywhere fails the case, as that operation would stop a PSP, whose FPU traps on
// them (tests/fp_trap_test.cpp is the hosts' side of the same guard).
#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "firmware_device.h"  // generated: the device profile and its tier capacities
#include "pocketlm/base/format.h"
#include "pocketlm/io/memory_storage.h"
#include "pocketlm/runtime/session.h"
#include "ports/cortex_m/instruction_clock.h"
#include "ports/cortex_m/semihosting_storage.h"
#include "ports/cortex_m/stack_watermark.h"

extern "C" const unsigned char pocketlm_tokenizer_image[], pocketlm_tokenizer_image_end[];
#ifdef POCKETLM_MODEL_PATH
extern "C" const unsigned char pocketlm_model_image[], pocketlm_model_image_end[];
#endif

namespace {

// The PSRAM tier's capacity: the profile's, or a smaller one that a planted case gives to show
// that a plan which does not fit stops the firmware at start (scripts/run-firmware-golden).
#ifdef POCKETLM_FIRMWARE_PSRAM_BYTES
constexpr std::size_t kTier1Bytes = POCKETLM_FIRMWARE_PSRAM_BYTES;
#else
constexpr std::size_t kTier1Bytes = pocketlm::firmware::kTier1Bytes;
#endif

constexpr pocketlm::DeviceProfile device_profile() {
  pocketlm::DeviceProfile d = pocketlm::firmware::kDevice;
  d.tiers[1].capacity = kTier1Bytes;
  return d;
}
constexpr pocketlm::DeviceProfile kDevice = device_profile();

// The RAM tiers: internal SRAM (with the program's data and stack) and PSRAM.
alignas(16) __attribute__((section(".tier0"))) unsigned char g_tier0[pocketlm::firmware::kTier0Bytes];
alignas(16) __attribute__((section(".tier1"))) unsigned char g_tier1[kTier1Bytes];

pocketlm::Session g_session;

bool on_token(std::int32_t prev, std::int32_t next, void *) {
  const pocketlm::Piece p = g_session.tokenizer().decode(prev, next);
  std::printf("next: %d piece: ", static_cast<int>(next));
  std::fwrite(p.data, 1, p.size, stdout);
  std::printf("\n");
  return true;
}

// printf through the engine's formatter: newlib-nano's printf has no %llu (or %f).
__attribute__((format(printf, 1, 2))) void say(const char *fmt, ...) {
  char line[192];
  va_list args;
  va_start(args, fmt);
  pocketlm::vformat_to(line, sizeof line, fmt, args);
  va_end(args);
  std::printf("%s\n", line);
}

void print_line(const char *line, void *) { say("plan: %s", line); }

std::size_t image_bytes(const unsigned char *begin, const unsigned char *end) {
  return static_cast<std::size_t>(end - begin);
}

// Instructions in `seconds` of the instruction clock (GenerateStats keeps its sums in seconds).
unsigned long long instructions(double seconds) {
  return static_cast<unsigned long long>(seconds * pocketlm::firmware::kTicksPerSecond + 0.5) *
         pocketlm::firmware::kInstructionsPerTick;
}

// FPSCR's cumulative exception bits: IOC (invalid) 0, DZC (divide-by-zero) 1, OFC (overflow) 2, UFC
// (underflow) 3, IXC (inexact) 4, IDC (input denormal) 7.
constexpr std::uint32_t kFpFlags = 0x9F;
constexpr std::uint32_t kFpTrapping = 0x7;  // what a PSP's FCR31 0x0E00 traps on

std::uint32_t fpscr() {
  std::uint32_t v = 0;
  __asm__ volatile("vmrs %0, fpscr" : "=r"(v));
  return v;
}

void clear_fp_flags() {
  const std::uint32_t v = fpscr() & ~kFpFlags;
  __asm__ volatile("vmsr fpscr, %0" : : "r"(v));
}

int fail(const pocketlm::Status &st) {
  std::printf("error: %s\n", st.message());
  return 1;
}

}  // namespace

int main() {
  clear_fp_flags();
  pocketlm::firmware::start_clock();
#ifdef POCKETLM_MODEL_PATH
  pocketlm::MemoryStorage model(pocketlm_model_image, image_bytes(pocketlm_model_image, pocketlm_model_image_end),
                                "flash:model");
#else
  pocketlm::firmware::SemihostingStorage model(POCKETLM_MODEL_HOST_FILE);
  if (!model.status().ok()) return fail(model.status());
#endif
  pocketlm::MemoryStorage tokenizer(
      pocketlm_tokenizer_image, image_bytes(pocketlm_tokenizer_image, pocketlm_tokenizer_image_end), "flash:tokenizer");
  pocketlm::SessionOptions options;
  options.device = &kDevice;
  // The backend this image counts (CMake builds each case with cortex_m4 and with tiled4); the
  // device profile names tiled4, the ESP32-S3's, which the plan's layouts are the same as.
  options.kernels = pocketlm::find_kernels(POCKETLM_FIRMWARE_KERNELS);
  if (!options.kernels) {
    std::printf("error: this build has no %s kernels\n", POCKETLM_FIRMWARE_KERNELS);
    return 1;
  }
  options.tier_buffers[0] = g_tier0;
  options.tier_buffer_bytes[0] = sizeof g_tier0;
  options.tier_buffers[1] = g_tier1;
  options.tier_buffer_bytes[1] = sizeof g_tier1;
  options.clock = pocketlm::firmware::clock_ticks;
  options.clock_ticks_per_second = pocketlm::firmware::kTicksPerSecond;
  say("device: %s; model %s (%llu bytes)", kDevice.name, model.name(), static_cast<unsigned long long>(model.size()));
  pocketlm::Status st = g_session.open(model, tokenizer, options);
  if (!st.ok()) {
    // A plan that does not fit the tiers: the plan says where the bytes would have gone.
    if (g_session.plan().size() > 0) g_session.plan().render(print_line, nullptr);
    return fail(st);
  }
  const pocketlm::MemoryPlan &plan = g_session.plan();
  // The memory map in use: each RAM tier's arena in its buffer, and what stays in storage.
  for (int t = 0; t < plan.tier_count(); ++t) {
    if (plan.tier(t).storage) {
      std::uint64_t stored = 0;
      for (int i = 0; i < plan.size(); ++i)
        if (plan.region(i).tier == t) stored += plan.region(i).bytes;
      say("tier %s: %llu bytes of weights stay in storage, %llu read per token", plan.tier(t).name,
          static_cast<unsigned long long>(stored), static_cast<unsigned long long>(plan.storage_bytes_per_token()));
    } else {
      say("tier %s: %llu of %llu bytes at 0x%08lx", plan.tier(t).name,
          static_cast<unsigned long long>(plan.arena_bytes(t)), static_cast<unsigned long long>(plan.tier(t).capacity),
          reinterpret_cast<unsigned long>(t == 0 ? g_tier0 : g_tier1));
    }
  }
  std::printf("arena: %lu bytes, kernels %s\n", static_cast<unsigned long>(g_session.arena_bytes()),
              g_session.kernels().name);
  const char *text = POCKETLM_FIRMWARE_PROMPT;
  // The ids and the merge's scratch: len + 3 slots (sizeof counts the NUL) of
  // kEncodeWordsPerSlot, static to keep the stack bounded.
  static std::int32_t prompt[(sizeof(POCKETLM_FIRMWARE_PROMPT) + 2) * pocketlm::Tokenizer::kEncodeWordsPerSlot];
  int n = 0;
  st = g_session.encode(text, std::strlen(text), prompt, sizeof prompt / sizeof prompt[0], &n);
  if (!st.ok()) return fail(st);
  std::printf("prompt:");
  for (int i = 0; i < n; ++i) std::printf(" %d", static_cast<int>(prompt[i]));
  std::printf("\n");
  pocketlm::SamplerParams params;
  params.temperature = 0.0f;
  pocketlm::GenerateStats stats;
  st = g_session.generate(prompt, n, POCKETLM_FIRMWARE_STEPS, params, on_token, nullptr, &stats);
  if (!st.ok()) return fail(st);
  // Counted under QEMU's -icount shift=0 (instruction_clock.h); the token callback's printing is
  // part of each decode pass.
  say("instructions: prefill %llu over %d passes, decode %llu over %d passes", instructions(stats.prefill_seconds),
      stats.prefill_passes, instructions(stats.decode_seconds), stats.decode_passes);
  say("storage: decode %llu bytes in %llu seeks over %d passes",
      static_cast<unsigned long long>(stats.storage_bytes - stats.prefill_storage_bytes),
      static_cast<unsigned long long>(stats.storage_seeks - stats.prefill_storage_seeks), stats.decode_passes);
  std::printf("stack high water: %lu bytes\n", static_cast<unsigned long>(pocketlm::stack_high_water()));
#ifdef POCKETLM_FIRMWARE_PLANTED_OVERFLOW
  // A planted violation: the check below must fail the case (scripts/run-firmware-golden).
  volatile float big = 3e38f;
  big = big * 10.0f;
#endif
  const std::uint32_t raised = fpscr() & kFpTrapping;
  if (raised) {
    std::printf("error: FP exception flags 0x%lx raised (1 invalid, 2 divide-by-zero, 4 overflow): a PSP would trap\n",
                static_cast<unsigned long>(raised));
    return 1;
  }
  std::printf("fp flags: no invalid, divide-by-zero or overflow\n");
  return 0;
}
