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

}  // namespace pocketlm
