// Fuzzes checkpoint parsing (read_llama2c_spec over a MemoryStorage of the input) and, when
// the header is valid and its session plan is under 64 MiB, loading and running the model:
// the input's header is extended to the size it implies (the input bytes repeated as weight
// data, so NaN/Inf/huge scales occur), Session::open reads it with tok512 (or tokenizer.bin
// for vocab_size 32000) and generate() does two forward passes with sampling.
#include <cstdio>
#include <cstring>

#include "fuzz_common.h"
#include "pocketlm/format/model_reader.h"
#include "pocketlm/format/llama2c_reader.h"
#include "pocketlm/runtime/session.h"

using namespace pocketlm;

namespace {

constexpr std::uint64_t kMaxPlanBytes = 64ull << 20;

// The input followed by the input again and again, up to `size` bytes (no copy).
class RepeatStorage final : public Storage {
 public:
  RepeatStorage(const std::uint8_t* data, std::size_t n, std::uint64_t size) : data_(data), n_(n), size_(size) {}
  const char* name() const override { return "fuzz.bin"; }
  std::uint64_t size() const override { return size_; }
  Status read(std::uint64_t offset, void* dst, std::size_t bytes) override {
    if (offset > size_ || bytes > size_ - offset)
      return Status::error(StatusCode::kIoError, "fuzz.bin: read past the end");
    auto* out = static_cast<unsigned char*>(dst);
    while (bytes > 0) {
      const std::size_t at = static_cast<std::size_t>(offset % n_);
      const std::size_t take = bytes < n_ - at ? bytes : n_ - at;
      std::memcpy(out, data_ + at, take);
      out += take;
      offset += take;
      bytes -= take;
    }
    return Status();
  }

 private:
  const std::uint8_t* data_;
  std::size_t n_;
  std::uint64_t size_;
};

// The size a header implies, from the reader's "implies N bytes" message when the storage
// claims a far larger size; 0 when the header itself is bad.
std::uint64_t implied_size(const std::uint8_t* data, std::size_t size) {
  RepeatStorage huge(data, size, std::uint64_t{1} << 60);
  ModelSpec spec;
  const Status st = read_model_spec(huge, &spec);
  const char* at = std::strstr(st.message(), "implies ");
  return at ? std::strtoull(at + 8, nullptr, 10) : 0;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::vector<unsigned char>& tok512 = fuzz::shared_file("tok512.bin");
  static const std::vector<unsigned char>& tok32k = fuzz::shared_file("tokenizer.bin");
  MemoryStorage exact(data, size, "fuzz.bin");
  ModelSpec spec;
  if (read_model_spec(exact, &spec).ok() && spec.file_bytes != size) std::abort();
  if (size < 28) return 0;

  const std::uint64_t implied = implied_size(data, size);
  if (implied < size || implied > kMaxPlanBytes) return 0;
  RepeatStorage model(data, size, implied);
  if (!read_model_spec(model, &spec).ok()) std::abort();  // the size it implies must be accepted
  const bool big_vocab = spec.config.vocab_size == 32000;
  const std::vector<unsigned char>& tok_bytes = big_vocab ? tok32k : tok512;
  MemoryStorage tok(tok_bytes.data(), tok_bytes.size(), big_vocab ? "tokenizer.bin" : "tok512.bin");

  SessionOptions options;
  options.seq_len = spec.config.seq_len > 4 ? 4 : 0;  // the KV cache of a hostile seq_len is not the point
  SessionPlan plan;
  if (!plan_session(model, &tok, options, &plan).ok() || plan.memory.total() > kMaxPlanBytes) return 0;
  Session session;
  if (!session.open(plan, model, &tok, options).ok()) return 0;
  const std::int32_t prompt[2] = {spec.config.vocab_size > 1 ? kBosToken : 0, static_cast<std::int32_t>(data[size - 1] % spec.config.vocab_size)};
  const int n_prompt = spec.config.vocab_size > 1 ? 1 + (data[size - 1] & 1) : 1;
  SamplerParams params;
  params.seed = 1 + data[0];
  params.temperature = (data[1] & 1) ? 0.0f : 1.0f;
  const int steps = session.seq_len() < 2 ? session.seq_len() : 2;
  // Finite weights may still overflow to non-finite logits: generate() stops with that error
  // (kBadFormat) instead of sampling NaNs. Any other failure is a bug.
  const Status st = session.generate(prompt, n_prompt, steps, params, nullptr, nullptr, nullptr);
  if (!st.ok() && (st.code() != StatusCode::kBadFormat || !std::strstr(st.message(), "are not finite"))) {
    std::fprintf(stderr, "fuzz_checkpoint: generate() failed: %s\n", st.message());
    std::abort();
  }
  return 0;
}
