#!/usr/bin/env bash
# Seed corpora for the fuzz targets, cut from the shared models (headers, truncations, the
# tokenizer's first records) plus a few hand-written inputs. Usage:
#   fuzz/make-corpus.sh OUT_DIR     (e.g. build-fuzz/corpus; git-ignored, like every build*/)
# Writes OUT_DIR/<target>/seed-*; model files are read from $POCKETLM_SHARED/models
# (default ../shared/models next to the checkout) and never copied whole.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: fuzz/make-corpus.sh OUT_DIR}
models=${POCKETLM_SHARED:-../shared}/models
for f in stories260K.bin stories260K_q80.bin tok512.bin tokenizer.bin; do
  [[ -f $models/$f ]] || { echo "make-corpus: missing $models/$f" >&2; exit 1; }
done
for t in checkpoint tokenizer_load encode decode_stream utf16 byte_size cli sampler; do mkdir -p "$out/fuzz_$t"; done

# Little-endian int32s as raw bytes.
i32() { local v; for v in "$@"; do printf "$(printf '\\%03o\\%03o\\%03o\\%03o' $((v & 255)) $((v >> 8 & 255)) $((v >> 16 & 255)) $((v >> 24 & 255)))"; done; }

# Checkpoints: real headers and truncations; small synthetic headers (the fuzzer extends a
# header to the size it implies, so a header alone reaches loading and the forward pass).
c=$out/fuzz_checkpoint
head -c 28 "$models/stories260K.bin" >"$c/seed-v0-header"
head -c 1024 "$models/stories260K.bin" >"$c/seed-v0-1k"
head -c 256 "$models/stories260K_q80.bin" >"$c/seed-v2-header"
head -c 1024 "$models/stories260K_q80.bin" >"$c/seed-v2-1k"
i32 8 16 1 2 2 512 4 >"$c/seed-v0-tiny"                 # dim hidden layers heads kv vocab seq
i32 8 16 2 2 1 -512 8 >"$c/seed-v0-tiny-gqa-unshared"
i32 4 4 1 1 1 32000 2 >"$c/seed-v0-tiny-vocab32k"
{ i32 $((0x616b3432)) 1 8 16 1 2 2 512 4; printf '\001'; head -c 219 /dev/zero; } >"$c/seed-v1-tiny"
{ i32 $((0x616b3432)) 2 8 16 1 2 2 512 4; printf '\001'; i32 8; head -c 215 /dev/zero; } >"$c/seed-v2-tiny"

# Tokenizer files: two bytes of vocab_size - 1, then the file (or its first records).
k=$out/fuzz_tokenizer_load
{ printf '\377\001'; cat "$models/tok512.bin"; } >"$k/seed-tok512"            # vocab 512
{ printf '\377\001'; head -c 2048 "$models/tok512.bin"; } >"$k/seed-tok512-2k"
{ printf '\002\001'; head -c 3000 "$models/tokenizer.bin"; } >"$k/seed-tokenizer-259"
{ printf '\003\000'; i32 5 0 1; printf 'a'; i32 0 1; printf 'b'; i32 0 2; printf 'ab'; i32 0 1; printf ' '; } >"$k/seed-tiny"

e=$out/fuzz_encode
printf 'Once upon a time, there was a little robot' >"$e/seed-ascii"
printf 'Zo\303\253 saw a \360\237\220\211 and \346\227\245\346\234\254.' >"$e/seed-utf8"
printf '\377\376\300\200\355\240\200 \342\202 x\n\t' >"$e/seed-invalid"
printf '' >"$e/seed-empty"

d=$out/fuzz_decode_stream
printf '\000\003\001\004\001\005\001\006\001' >"$d/seed-bytes512"             # <0x00>.. byte tokens
printf '\001\363\000\237\000\220\000\211\000' >"$d/seed-dragon32k"            # F0 9F 90 89 as byte tokens
head -c 64 "$models/stories260K.bin" >"$d/seed-model-bytes"

u=$out/fuzz_utf16
printf '\200H\000i\000 \000\254\040=\330\011\334' >"$u/seed-mixed"           # "Hi €🐉", roomy buffer
printf '\003=\330a\000\000\334' >"$u/seed-unpaired-small"
printf '\200a\000b' >"$u/seed-odd"

b=$out/fuzz_byte_size
for s in 24M 24MiB 25165824 1.5G 512K 8B 0.5K 9223372036854775808 1e3 -1 16EiB; do
  printf '%s' "$s" >"$b/seed-$s"
done

l=$out/fuzz_cli
printf '\002@0\n-z\n@2\n-t\n0\n-n\n4\n-i\nOnce' >"$l/seed-run"
printf '\002@1\n-z\n@2\n-s\n42\n--threads\n2\n--kernels\nreference' >"$l/seed-run-q80"
printf '\000@0\n-z\n@2\n--heap\n1M' >"$l/seed-plan"
printf '\001@1' >"$l/seed-inspect"
printf '\002@0\n-m\nchat' >"$l/seed-chat"
# Sampler: [mode][T][topp][seed][coin][logits] (fuzz/fuzz_sampler.cpp). Table mode picks T and
# topp by their first byte (T 1: 1.0, 3: 2e-38, 4: 1e-45; topp 0: 0.9, 2: 1.0), logits one byte
# each (bytes 0-8 are NaN, +-inf, +-1e-45, +-3.4e38, -0, 1e30; others b/8 - 16).
sm=$out/fuzz_sampler
ladder() { local i; for ((i = 0; i < $1; i++)); do printf "$(printf '\\%03o' $(( (i * 37 + $2) % 247 + 9 )))"; done; }
{ printf '\000\001\000\000\000\000\000\000\000\007\000\000\000\077'; ladder 300 11; } >"$sm/seed-topp-ladder"
{ printf '\000\003\000\000\000\000\000\000\000\005\000\000\000\077'; ladder 512 3; } >"$sm/seed-tiny-temperature"
{ printf '\000\004\000\000\000\002\000\000\000\005\000\000\000\077'; ladder 64 5; } >"$sm/seed-subnormal-temperature"
{ printf '\000\001\000\000\000\000\000\000\000\001\000\000\000\077\200\200\000\200\001\200\002\003\200\005'; } >"$sm/seed-specials"
{ printf '\002\001\000\000\000\000\000\000\000\002\000\000\000\077'; i32 1065353216 2143289344 2139095040 1 -8388608 1056964608 0 1065353216; } >"$sm/seed-raw-floats"

echo "make-corpus: seeds in $out"
