// The firmware program every bare-metal board runs (board.h): the engine through its C API
// (pocketlm.h), as the PSP and ESP-IDF ports use it. The session's tiers are a device profile's
// (device_profile.cmake: an ESP32-S3's SRAM, PSRAM and flash, or a PSP's heap and memory stick),
// each RAM tier a static buffer of the profile's capacity in the linker section `.tier<i>` that
// the board places in the memory standing for it; the model is read through the API's storage
// callbacks, from an image linked in as flash would hold it or from a file on the host through
// semihosting (a model larger than the board's code memory, or a PSP's memory stick).
//
// scripts/run-firmware-golden runs each image under QEMU with `-icount shift=0` and checks its
// tokens against the golden ones. The program prints what a device estimate needs: instructions
// for prefill and decode (the board's instruction clock), the bytes a decode token reads from
// storage, the deepest stack used; and it checks the FPU's sticky flags: invalid, divide-by-zero or
// overflow raised anywhere fails the case, as the operation would stop a PSP, whose FPU traps on
// them (a board that arms those traps, arm_fp_traps(), stops at the operation itself).
#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include <unistd.h>

#include "firmware_device.h"  // generated: the device profile's tiers
#include "pocketlm/api/pocketlm.h"
#include "pocketlm/base/format.h"
#include "ports/firmware/board.h"
#include "ports/firmware/say.h"
#include "ports/firmware/semihosting_storage.h"

extern "C" const unsigned char pocketlm_tokenizer_image[], pocketlm_tokenizer_image_end[];
#ifdef POCKETLM_MODEL_PATH
extern "C" const unsigned char pocketlm_model_image[], pocketlm_model_image_end[];
#endif

namespace {

namespace fw = pocketlm::firmware;
using fw::say;

// The last RAM tier's capacity: the profile's, or a smaller one that a planted case gives to show
// that a plan which does not fit stops the firmware at start (scripts/run-firmware-golden).
constexpr std::size_t tier_bytes(int tier) {
#ifdef POCKETLM_FIRMWARE_LAST_TIER_BYTES
  if (tier == fw::kRamTierCount - 1) return POCKETLM_FIRMWARE_LAST_TIER_BYTES;
#endif
  return static_cast<std::size_t>(fw::kRamTiers[tier].capacity);
}

// The RAM tiers' buffers, one linker section each (the board's script places them).
alignas(16) __attribute__((section(".tier0"))) unsigned char g_tier0[tier_bytes(0)];
#if POCKETLM_FIRMWARE_RAM_TIERS > 1
alignas(16) __attribute__((section(".tier1"))) unsigned char g_tier1[tier_bytes(1)];
#endif
unsigned char* const g_tiers[fw::kRamTierCount] = {
    g_tier0,
#if POCKETLM_FIRMWARE_RAM_TIERS > 1
    g_tier1,
#endif
};

// The session object, with the program's data (the C API allocates nothing).
alignas(16) unsigned char g_session_memory[40 * 1024];

void put(const char* text, std::size_t length) { ::write(1, text, length); }

int on_token(void*, std::int32_t token, const char* piece, std::size_t len) {
  char head[32];
  put(head, pocketlm::format_to(head, sizeof head, "next: %d piece: ", static_cast<int>(token)));
  put(piece, len);
  put("\n", 1);
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
  return static_cast<fw::SemihostingStorage*>(ctx)->read(offset, dst, bytes).ok() ? 0 : 1;
}

// Instructions in `seconds` of the instruction clock (the stats keep their sums in seconds).
unsigned long long instructions(double seconds) {
  return static_cast<unsigned long long>(seconds * static_cast<double>(fw::ticks_per_second()) + 0.5) *
         fw::instructions_per_tick();
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
          static_cast<unsigned long long>(tier.capacity),
          t < fw::kRamTierCount ? reinterpret_cast<unsigned long>(g_tiers[t]) : 0ul);
  }
}

int fail(pocketlm_session* session) {
  say("error: %s", pocketlm_last_error(session));
  return 1;
}

}  // namespace

int main() {
  fw::clear_fp_flags();
  fw::start_clock();
  pocketlm_config config;
  pocketlm_config_defaults(&config);
#ifdef POCKETLM_MODEL_PATH
  config.model = image_storage(pocketlm_model_image, pocketlm_model_image_end, "flash:model");
#else
  fw::SemihostingStorage host_file(POCKETLM_MODEL_HOST_FILE);
  if (!host_file.status().ok()) {
    say("error: %s", host_file.status().message());
    return 1;
  }
  config.model = pocketlm_storage{read_host_file, &host_file, host_file.size(), host_file.name()};
#endif
  config.tokenizer = image_storage(pocketlm_tokenizer_image, pocketlm_tokenizer_image_end, "flash:tokenizer");
  // The device profile's tiers (firmware_device.h): its RAM tiers, then the storage medium that
  // holds the model file beside the firmware's reserved bytes.
  config.ram_tier_count = fw::kRamTierCount;
  for (int t = 0; t < fw::kRamTierCount; ++t) {
    config.ram_tiers[t] = {fw::kRamTiers[t].name, tier_bytes(t)};
    config.tier_buffers[t] = g_tiers[t];
    config.tier_buffer_bytes[t] = tier_bytes(t);
  }
  config.storage_name = fw::kStorageTier.name;
  config.storage_capacity = fw::kStorageTier.capacity;
  config.storage_reserved = fw::kStorageReservedBytes;
  // The backend this image counts (each case is built with the board's default backend and with
  // tiled4, the device profiles' portable one, which has the same weight layouts).
  config.kernels = POCKETLM_FIRMWARE_KERNELS;
  config.clock = fw::clock_ticks;
  config.clock_ticks_per_second = fw::ticks_per_second();
  say("device: %s on %s; model %s (%llu bytes)", fw::kDeviceName, fw::isa_name(), config.model.name,
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
    say("error: the prompt needs %lu entries", static_cast<unsigned long>(need));
    return 1;
  }
  int n = 0;
  if (pocketlm_encode(session, text, std::strlen(text), 1, prompt, sizeof prompt / sizeof prompt[0], &n) != POCKETLM_OK)
    return fail(session);
  char line[16];
  put("prompt:", 7);
  for (int i = 0; i < n; ++i) put(line, pocketlm::format_to(line, sizeof line, " %d", static_cast<int>(prompt[i])));
  put("\n", 1);
  pocketlm_sampler greedy;
  pocketlm_sampler_defaults(&greedy);
  greedy.temperature = 0.0f;
  pocketlm_stats stats = {};
  stats.size = sizeof stats;
  // The FPU as the device runs it, from the first token on (the PSP's traps).
  fw::arm_fp_traps();
  if (pocketlm_generate(session, prompt, n, POCKETLM_FIRMWARE_STEPS, &greedy, on_token, nullptr, &stats) !=
      POCKETLM_OK)
    return fail(session);
  pocketlm_close(session);
  // Counted under QEMU's -icount shift=0 (board.h); the token callback's printing is part of each
  // decode pass.
  say("instructions: prefill %llu over %d passes, decode %llu over %d passes", instructions(stats.prefill_seconds),
      stats.prefill_passes, instructions(stats.decode_seconds), stats.decode_passes);
  say("storage: decode %llu bytes in %llu seeks over %d passes",
      static_cast<unsigned long long>(stats.storage_bytes - stats.prefill_storage_bytes),
      static_cast<unsigned long long>(stats.storage_seeks - stats.prefill_storage_seeks), stats.decode_passes);
  say("stack high water: %lu bytes", static_cast<unsigned long>(fw::stack_high_water()));
#ifdef POCKETLM_FIRMWARE_PLANTED_FAULT
  // A planted violation: the board's guard must stop it, or the flag check below fail it.
  fw::planted_fault();
#endif
  const std::uint32_t raised = fw::fp_flags();
  if (raised) {
    say("error: FP exception flags 0x%lx raised (1 invalid, 2 divide-by-zero, 4 overflow): a PSP would trap",
        static_cast<unsigned long>(raised));
    return 1;
  }
  say("fp flags: no invalid, divide-by-zero or overflow");
  return 0;
}
