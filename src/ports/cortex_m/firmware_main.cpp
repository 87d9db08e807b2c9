// A firmware-shaped program for a Cortex-M4F: the model and tokenizer live in read-only memory
// (images.S links them in, as flash would hold them), the session arena is a static buffer,
// and text goes out through newlib's semihosting stdout. `make test-bare-metal` runs it under
// QEMU's mps2-an386 and compares the tokens with llama2.c's golden run; it also reports the
// deepest stack the engine used (the ESP-IDF main task has 3.5 KiB), and the FPU's sticky
// exception flags: invalid, divide-by-zero or overflow raised anywhere in a case fails it, as
// that operation would stop a PSP, whose FPU traps on them (tests/fp_trap_test.cpp is the hosts'
// side of the same guard).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "pocketlm/io/memory_storage.h"
#include "pocketlm/runtime/session.h"
#include "ports/cortex_m/stack_watermark.h"

extern "C" const unsigned char pocketlm_model_image[], pocketlm_model_image_end[];
extern "C" const unsigned char pocketlm_tokenizer_image[], pocketlm_tokenizer_image_end[];

namespace {

// The arena: one static buffer (stories260K at its full 512-token context needs ~1.7 MiB).
alignas(16) unsigned char g_arena[POCKETLM_FIRMWARE_ARENA_BYTES];

pocketlm::Session g_session;

struct Output {
  int count = 0;
};

bool on_token(std::int32_t prev, std::int32_t next, void* ctx) {
  static_cast<Output*>(ctx)->count++;
  const pocketlm::Piece p = g_session.tokenizer().decode(prev, next);
  std::printf("next: %d piece: ", static_cast<int>(next));
  std::fwrite(p.data, 1, p.size, stdout);
  std::printf("\n");
  return true;
}

std::size_t image_bytes(const unsigned char* begin, const unsigned char* end) {
  return static_cast<std::size_t>(end - begin);
}

// FPSCR's cumulative exception bits: IOC (invalid) 0, DZC (divide-by-zero) 1, OFC (overflow) 2,
// UFC (underflow) 3, IXC (inexact) 4, IDC (input denormal) 7.
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

}  // namespace

int main() {
  clear_fp_flags();
  pocketlm::MemoryStorage model(pocketlm_model_image,
                                image_bytes(pocketlm_model_image, pocketlm_model_image_end), "flash:model");
  pocketlm::MemoryStorage tokenizer(pocketlm_tokenizer_image,
                                    image_bytes(pocketlm_tokenizer_image, pocketlm_tokenizer_image_end),
                                    "flash:tokenizer");
  pocketlm::SessionOptions options;
  options.tier_buffers[0] = g_arena;
  options.tier_buffer_bytes[0] = sizeof g_arena;
  options.budget_bytes = sizeof g_arena;  // the plan fits the buffer (prefill batch, streaming)
  pocketlm::Status st = g_session.open(model, tokenizer, options);
  if (!st.ok()) {
    std::printf("error: %s\n", st.message());
    return 1;
  }
  std::printf("arena: %lu bytes (plan %lu), kernels %s\n", static_cast<unsigned long>(g_session.arena_bytes()),
              static_cast<unsigned long>(g_session.plan().total()), g_session.kernels().name);
  const char* text = POCKETLM_FIRMWARE_PROMPT;
  // The ids and the merge's scratch: len + 3 slots (sizeof counts the NUL) of kEncodeWordsPerSlot,
  // static to keep the stack bounded.
  static std::int32_t prompt[(sizeof(POCKETLM_FIRMWARE_PROMPT) + 2) * pocketlm::Tokenizer::kEncodeWordsPerSlot];
  int n = 0;
  st = g_session.encode(text, std::strlen(text), prompt, sizeof prompt / sizeof prompt[0], &n);
  if (!st.ok()) {
    std::printf("error: %s\n", st.message());
    return 1;
  }
  std::printf("prompt:");
  for (int i = 0; i < n; ++i) std::printf(" %d", static_cast<int>(prompt[i]));
  std::printf("\n");
  pocketlm::SamplerParams params;
  params.temperature = 0.0f;
  Output out;
  st = g_session.generate(prompt, n, POCKETLM_FIRMWARE_STEPS, params, on_token, &out, nullptr);
  if (!st.ok()) {
    std::printf("error: %s\n", st.message());
    return 1;
  }
  std::printf("stack high water: %lu bytes\n", static_cast<unsigned long>(pocketlm::stack_high_water()));
  const std::uint32_t raised = fpscr() & kFpTrapping;
  if (raised) {
    std::printf("error: FP exception flags 0x%lx raised (1 invalid, 2 divide-by-zero, 4 overflow): a PSP would trap\n",
                static_cast<unsigned long>(raised));
    return 1;
  }
  std::printf("fp flags: no invalid, divide-by-zero or overflow\n");
  return 0;
}
