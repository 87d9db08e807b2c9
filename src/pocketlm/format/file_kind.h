// Recognising the files people give instead of a llama2.c checkpoint or tokenizer.bin, from
// their first bytes: a Git LFS pointer or a web page saved by a failed download, a GGUF/GGML,
// PyTorch or safetensors model, a checkpoint written big-endian, a tokenizer where a model was
// expected (or a model where a tokenizer was), a program. Used only on the readers' error
// paths, so that the one-line error says what the file is and what to do instead of naming a
// header field of bytes that were never a header.
#pragma once

#include <cstddef>
#include <cstdint>

#include "pocketlm/base/status.h"
#include "pocketlm/io/storage.h"

namespace pocketlm {

// How many leading bytes the recognisers look at (fewer when the file is shorter).
inline constexpr std::size_t kFileKindHeadBytes = 256;

// What the file was given as: the model (a llama2.c checkpoint) or -z's tokenizer.bin. It
// decides which kinds are foreign and how the advice is worded.
enum class ExpectedFile { kModel, kTokenizer };

// Writes a short description of the foreign file whose first `n` bytes are `head` (of a file
// of `file_bytes`) to `out`, e.g. "a Git LFS pointer, not the model itself: run `git lfs
// pull` ...", and returns true; returns false when the bytes match none of the kinds. What
// is expected is never described: a valid llama2.c header as a model (a little-endian
// reading that makes sense wins), a tokenizer.bin as a tokenizer.
bool describe_foreign_file(const unsigned char* head, std::size_t n, std::uint64_t file_bytes, char* out,
                           std::size_t out_size, ExpectedFile expected = ExpectedFile::kModel);

// For a file its reader rejected with `rejected`: when `storage` starts like a known foreign
// file, a kBadFormat error "NAME: this is <description>"; otherwise `rejected` unchanged.
Status name_foreign_file(Storage& storage, const Status& rejected, ExpectedFile expected = ExpectedFile::kModel);

}  // namespace pocketlm
