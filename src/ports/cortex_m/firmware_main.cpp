// A firmware-shaped program for a Cortex-M4F, laid out like an ESP32-S3 (mps2_an386.ld), using the
// engine through its C API (pocketlm.h), as the PSP and ESP-IDF ports do: the session's tiers are
// the device profile's (device_profile.cmake: internal SRAM, PSRAM, flash), each RAM tier a static
// buffer of the profile's capacity in its own memory region, and the model is read through the
// API's storage callbacks: an image linked into code memory as flash would hold it, or a file on the
// host through semihosting when it is larger than the board's 4 MiB of code memory (the ESP32-shaped
// PLE model).
// Text goes out through newlib's semihosting stdout.
//
// `make test-bare-metal` runs it under QEMU's mps2-an386 with `-icount shift=0` and checks its
// tokens against the golden ones (scripts/run-firmware-golden). It prints what a device estimate
// needs: the instructions of prefill and decode (SysTick counts them, instruction_clock.h), the
// bytes a decode token reads from storage, and the deepest stack the engine used (at most 8 KiB;
// the ESP-IDF port runs it in a 16 KiB main task, as Xtensa's frames are larger; IDF's default of
// 3.5 KiB is too small for a file's load through the C API). It also checks the FPU's sticky exception flags: invalid, divide-by-zero or
// overflow raised anywhere fails the case, as that operation would stop a PSP, whose FPU traps on
// them (tests/fp_trap_test.cpp is the hosts' side of the same guard).
#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "firmware_device.h"  // generated: the device profile's tiers
#include "pocketlm/api/pocketlm.h"
#include "pocketlm/base/format.h"
#include "ports/cortex_m/instruction_clock.h"
#include "ports/cortex_m/semihosting_storage.h"
#include "ports/cortex_m/stack_watermark.h"

extern "C" const unsigned char pocketlm_tokenizer_image[], pocketlm_tokenizer_image_end[];
#ifdef POCKETLM_MODEL_PATH
extern "C" const unsigned char pocketlm_model_image[], pocketlm_model_image_end[];
#endif

namespace {

// The PSRAM tier's capacity: the profile's, or a smaller one that a planted case gives to show that
// a plan which does not fit stops the firmware at start (scripts/run-firmware-golden).
#ifdef POCKETLM_FIRMWARE_PSRAM_BYTES
constexpr std::size_t kPsramBytes = POCKETLM_FIRMWARE_PSRAM_BYTES;
#else
constexpr std::size_t kPsramBytes = pocketlm::firmware::kTier1Bytes;
#endif

// The RAM tiers: internal SRAM (with the program's data and stack) and PSRAM.
alignas(16) __attribute__((section(".tier0"))) unsigned char g_tier0[pocketlm::firmware::kTier0Bytes];
alignas(16) __attribute__((section(".tier1"))) unsigned char g_tier1[kPsramBytes];

// The session object, in internal SRAM with the program's data (the C API allocates nothing).
alignas(16) unsigned char g_session_memory[40 * 1024];

// printf through the engine's formatter: newlib-nano's printf has no %llu (or %f).
__attribute__((format(printf, 1, 2))) void say(const char* fmt, ...) {
  char line[192];
  va_list args;
  va_start(args, fmt);
  pocketlm::vformat_to(line, sizeof line, fmt, args);
  va_end(args);
  std::printf("%s\n", line);
}

int on_token(void*, std::int32_t token, const char* piece, std::size_t len) {
  std::printf("next: %d piece: ", static_cast<int>(token));
  std::fwrite(piece, 1, len, stdout);
  std::printf("\n");
  return 0;
}

// A storage over bytes linked into code memory, as flash would hold them.
int read_image(void* ctx, std::uint64_t offset, void* dst, std::size_t bytes) {
  std::memcpy(dst, static_cast<const unsigned char*>(ctx) + offset, bytes);
  return 0;
}

pocketlm_storage image_storage(const unsigned char* begin, const unsigned char* end, const char* name) {
  return pocketlm_storage{read_image, const_cast<unsigned char*>(begin), static_cast<std::uint64_t>(end - begin), name};
}

// A storage over the host's file, read through semihosting.
int read_host_file(void* ctx, std::uint64_t offset, void* dst, std::size_t bytes) {
  return static_cast<pocketlm::firmware::SemihostingStorage*>(ctx)->read(offset, dst, bytes).ok() ? 0 : 1;
}

// Instructions in `seconds` of the instruction clock (the stats keep their sums in seconds).
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

// The memory map a plan gives: each RAM tier's bytes in its buffer, and what stays in storage.
void print_plan(const pocketlm_memory_plan& plan) {
  for (int t = 0; t < plan.tier_count; ++t) {
    const pocketlm_plan_tier& tier = plan.tiers[t];
    if (tier.storage)
      say("tier %s: %llu bytes of weights stay in storage, %llu read per token", tier.name,
          static_cast<unsigned long long>(tier.bytes), static_cast<unsigned long long>(plan.storage_bytes_per_token));
    else
      say("tier %s: %llu of %llu bytes at 0x%08lx", tier.name, static_cast<unsigned long long>(tier.bytes),
          static_cast<unsigned long long>(tier.capacity), reinterpret_cast<unsigned long>(t == 0 ? g_tier0 : g_tier1));
  }
}

int fail(pocketlm_session* session) {
  std::printf("error: %s\n", pocketlm_last_error(session));
  return 1;
}

}  // namespace

int main() {
  clear_fp_flags();
  pocketlm::firmware::start_clock();
  pocketlm_config config;
  pocketlm_config_defaults(&config);
#ifdef POCKETLM_MODEL_PATH
  config.model = image_storage(pocketlm_model_image, pocketlm_model_image_end, "flash:model");
#else
  pocketlm::firmware::SemihostingStorage host_file(POCKETLM_MODEL_HOST_FILE);
  if (!host_file.status().ok()) {
    std::printf("error: %s\n", host_file.status().message());
    return 1;
  }
  config.model = pocketlm_storage{read_host_file, &host_file, host_file.size(), host_file.name()};
#endif
  config.tokenizer = image_storage(pocketlm_tokenizer_image, pocketlm_tokenizer_image_end, "flash:tokenizer");
  // The device profile's tiers (firmware_device.h): SRAM, PSRAM, then the flash that holds the
  // model file beside the firmware's reserved bytes.
  config.ram_tier_count = 2;
  using pocketlm::firmware::kRamTiers, pocketlm::firmware::kStorageTier;
  config.ram_tiers[0] = {kRamTiers[0].name, kRamTiers[0].capacity};
  config.ram_tiers[1] = {kRamTiers[1].name, kPsramBytes};
  config.storage_name = kStorageTier.name;
  config.storage_capacity = kStorageTier.capacity;
  config.storage_reserved = pocketlm::firmware::kStorageReservedBytes;
  config.tier_buffers[0] = g_tier0;
  config.tier_buffer_bytes[0] = sizeof g_tier0;
  config.tier_buffers[1] = g_tier1;
  config.tier_buffer_bytes[1] = sizeof g_tier1;
  // The backend this image counts (CMake builds each case with cortex_m4 and with tiled4; the
  // device profile's tiled4, the ESP32-S3's, has the same weight layouts).
  config.kernels = POCKETLM_FIRMWARE_KERNELS;
  config.clock = pocketlm::firmware::clock_ticks;
  config.clock_ticks_per_second = pocketlm::firmware::kTicksPerSecond;
  say("device: %s; model %s (%llu bytes)", pocketlm::firmware::kDeviceName, config.model.name,
      static_cast<unsigned long long>(config.model.size));

  pocketlm_session* session = nullptr;
  if (pocketlm_create(g_session_memory, sizeof g_session_memory, &session) != POCKETLM_OK) return fail(nullptr);
  pocketlm_memory_plan plan = {};
  plan.size = sizeof plan;
  if (pocketlm_plan(session, &config, &plan) != POCKETLM_OK) {
    // A plan that does not fit the tiers: it says where the bytes would have gone.
    print_plan(plan);
    return fail(session);
  }
  print_plan(plan);
  if (pocketlm_open(session, &config) != POCKETLM_OK) return fail(session);
  say("arena: %llu bytes, kernels %s", static_cast<unsigned long long>(plan.ram_bytes), config.kernels);

  const char* text = POCKETLM_FIRMWARE_PROMPT;
  // The ids and the merge's scratch, static to keep the stack bounded: 8 entries a prompt byte
  // (and 3 more), above what pocketlm_prompt_capacity asks for, which is checked.
  static std::int32_t prompt[(sizeof(POCKETLM_FIRMWARE_PROMPT) + 2) * 8];
  std::size_t need = 0;
  if (pocketlm_prompt_capacity(session, std::strlen(text), &need) != POCKETLM_OK) return fail(session);
  if (need > sizeof prompt / sizeof prompt[0]) {
    std::printf("error: the prompt needs %lu entries\n", static_cast<unsigned long>(need));
    return 1;
  }
  int n = 0;
  if (pocketlm_encode(session, text, std::strlen(text), 1, prompt, sizeof prompt / sizeof prompt[0], &n) != POCKETLM_OK)
    return fail(session);
  std::printf("prompt:");
  for (int i = 0; i < n; ++i) std::printf(" %d", static_cast<int>(prompt[i]));
  std::printf("\n");
  pocketlm_sampler greedy;
  pocketlm_sampler_defaults(&greedy);
  greedy.temperature = 0.0f;
  pocketlm_stats stats = {};
  stats.size = sizeof stats;
  if (pocketlm_generate(session, prompt, n, POCKETLM_FIRMWARE_STEPS, &greedy, on_token, nullptr, &stats) !=
      POCKETLM_OK)
    return fail(session);
  pocketlm_close(session);
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
