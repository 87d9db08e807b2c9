// Fuzzes the GGUF reader (read_model_spec over a MemoryStorage of the input) and, when the
// header is valid and its session plan is small, loading the model with its embedded tokenizer
// (or tok512.bin for a 512-token model without one) and two forward passes with sampling.
// Invariants checked: an error is one line; an accepted spec's tensors and tokenizer arrays lie
// inside the input; the tokenizer loads from what the reader counted.
#include <cstring>

#include "fuzz_common.h"
#include "pocketlm/format/model_reader.h"
#include "pocketlm/runtime/session.h"

using namespace pocketlm;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::vector<unsigned char>& tok512 = fuzz::shared_file("tok512.bin");
  MemoryStorage model(data, size, "fuzz.gguf");
  ModelSpec spec;
  const Status st = read_model_spec(model, &spec);
  if (!st.ok()) {
    if (std::strchr(st.message(), '\n') || st.message()[0] == '\0') std::abort();
    return 0;
  }
  for (int i = 0; i < spec.tensor_count(); ++i) {
    const TensorInfo t = spec.tensor(i);
    if (t.offset > size || t.bytes() > size - t.offset) std::abort();
  }
  if (spec.tokenizer.present && (spec.tokenizer.tokens_offset >= size || spec.tokenizer.scores_offset >= size))
    std::abort();

  MemoryStorage tok(tok512.data(), tok512.size(), "tok512.bin");
  Storage* tokenizer = spec.tokenizer.present ? nullptr : &tok;
  if (!tokenizer && spec.config.vocab_size != 512 && !spec.tokenizer.present) return 0;
  if (tokenizer && spec.config.vocab_size != 512) return 0;
  SessionOptions options;
  options.seq_len = spec.config.seq_len > 4 ? 4 : 0;
  SessionPlan plan;
  if (!plan_session(model, tokenizer, options, &plan).ok() || plan.memory.total() > (64ull << 20)) return 0;
  Session session;
  if (!session.open(plan, model, tokenizer, options).ok()) return 0;
  const std::int32_t prompt[1] = {static_cast<std::int32_t>(spec.config.bos_id)};
  SamplerParams params;
  params.seed = 1 + data[size - 1];
  params.temperature = (data[size / 2] & 1) ? 0.0f : 1.0f;
  const int steps = session.seq_len() < 2 ? session.seq_len() : 2;
  // Finite weights may still overflow to non-finite logits: that is a clean error, not a crash.
  (void)session.generate(prompt, 1, steps, params, nullptr, nullptr, nullptr);
  return 0;
}
