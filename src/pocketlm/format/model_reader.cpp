#include "pocketlm/format/model_reader.h"

#include <cstring>

#include "pocketlm/format/file_kind.h"
#include "pocketlm/format/gguf_reader.h"
#include "pocketlm/format/llama2c_reader.h"

namespace pocketlm {

namespace {

// The storage with its first bytes already in memory: the reader that the probe chose reads
// its header again, and on a memory stick or flash every byte is read only once.
class ProbedStorage final : public Storage {
 public:
  ProbedStorage(Storage& inner, const unsigned char* head, std::size_t n) : inner_(inner), head_(head), n_(n) {}
  const char* name() const override { return inner_.name(); }
  std::uint64_t size() const override { return inner_.size(); }
  Status read(std::uint64_t offset, void* dst, std::size_t bytes) override {
    auto* out = static_cast<unsigned char*>(dst);
    if (offset < n_ && bytes > 0) {
      const std::size_t from_head = n_ - static_cast<std::size_t>(offset) < bytes ? n_ - static_cast<std::size_t>(offset) : bytes;
      std::memcpy(out, head_ + offset, from_head);
      out += from_head;
      offset += from_head;
      bytes -= from_head;
    }
    return bytes > 0 ? inner_.read(offset, out, bytes) : Status();
  }

 private:
  Storage& inner_;
  const unsigned char* head_;
  std::size_t n_;
};

// llama2.c v0 files have no magic (they start with dim), so this reader takes whatever no
// reader before it claimed; its header checks then name what is wrong.
bool probe_llama2c(const unsigned char*, std::size_t) { return true; }

const ModelReader kReaders[] = {
    {"GGUF", probe_gguf, read_gguf_spec},
    {"llama2.c", probe_llama2c, read_llama2c_spec},
    {nullptr, nullptr, nullptr},
};

}  // namespace

const ModelReader* model_readers() { return kReaders; }

Status read_model_spec(Storage& storage, ModelSpec* spec) {
  unsigned char head[kProbeBytes] = {};
  const std::size_t n = storage.size() < kProbeBytes ? static_cast<std::size_t>(storage.size()) : kProbeBytes;
  if (n > 0) POCKETLM_TRY(storage.read(0, head, n));
  ProbedStorage probed(storage, head, n);
  for (const ModelReader* r = kReaders; r->name; ++r) {
    if (!r->probe(head, n)) continue;
    // A rejected header: say what the file is when it is a known other kind (file_kind.h).
    const Status st = r->read(probed, spec);
    return st.code() == StatusCode::kBadFormat ? name_foreign_file(storage, st) : st;
  }
  return Status::error(StatusCode::kBadFormat, "%s: not a model file pocketlm can read", storage.name());
}

}  // namespace pocketlm
