// Reader for llama2.c checkpoints: v0 (legacy fp32, no magic), v1 (fp32 with a 256-byte
// header) and v2 (q80 int8 groups). Formats: shared/spec/llama2c-compat.md, after
// Karpathy's llama2.c export.py / run.c / runq.c.
#pragma once

#include "pocketlm/format/model_spec.h"
#include "pocketlm/io/storage.h"

namespace pocketlm {

inline constexpr std::uint32_t kLlama2cMagic = 0x616b3432;  // "ak42" little-endian
inline constexpr std::uint64_t kLlama2cHeaderBytes = 256;    // v1 and v2

// Reads and validates the header of `storage` and lays out every tensor. Checks, each an
// error naming the file, the field and the value: the magic/version, positive dims,
// dim % n_heads, n_heads % n_kv_heads, even head_size, the shared-classifier flag, the q80
// group size (must divide dim and hidden_dim: runq.c silently miscomputes otherwise), and a
// file size exactly equal to what the header implies (overflow-checked).
Status read_llama2c_spec(Storage& storage, ModelSpec* spec);

// Refuses a model one of whose tensors (values plus q8_0 scales) is larger than `max_bytes`,
// with a one-line kOutOfMemory error naming the file, the tensor and its size. The engine and
// the CLI pass SIZE_MAX before sizing anything in memory: a header is validated in 64-bit
// arithmetic, but on a 32-bit host (MIPS, Xtensa) a tensor of 4 GiB or more cannot be held,
// indexed or even sized in size_t. Tests pass a smaller limit to exercise it on 64-bit hosts.
Status check_tensors_addressable(const char* name, const ModelSpec& spec, std::uint64_t max_bytes);

}  // namespace pocketlm
