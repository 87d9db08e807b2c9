#!/usr/bin/env bash
# The models of the decode-speed work (issue 26) in models/, each made once: synth15M (fp32),
# synth42M_q80, synth110M_q80, synth110M_q4_0.gguf, synth110M_iq4_xs.gguf, and the TinyLlama-1.1B
# shape, larger than any cache: tinyllama.bin (fp32, 4.1 GB, its sha256 checked), tinyllama_q80.bin
# (1.1 GB) and tinyllama_q4_0.gguf (0.6 GB). About 9 GB of disk and a few minutes; never run by make test.
# Usage: bench/dram-models.sh [BUILD_DIR]   (needs models/tokenizer.bin: make models)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-build}/pocketlm
# pocketlm synth tinyllama --seed 42 (the stories shapes' rule: shared/spec/synthetic-models.md).
tinyllama_sha256=fb3ec3f38cd18cdecbe660532cea3b49adc8ec994f5677b98392c20c9a1ea7f5
mkdir -p models
make_once() {  # FILE COMMAND...: runs COMMAND unless FILE exists
  local file=$1
  shift
  [ -f "$file" ] || "$@"
}
make_once models/synth15M.bin "$bin" synth stories15M --seed 42 -o models/synth15M.bin
make_once models/synth42M.bin "$bin" synth stories42M --seed 42 -o models/synth42M.bin
make_once models/synth42M_q80.bin "$bin" convert models/synth42M.bin --to q80 -o models/synth42M_q80.bin
make_once models/synth110M.bin "$bin" synth stories110M --seed 42 -o models/synth110M.bin
make_once models/synth110M_q80.bin "$bin" convert models/synth110M.bin --to q80 -o models/synth110M_q80.bin
make_once models/synth110M_q4_0.gguf "$bin" convert models/synth110M.bin --to gguf --type q4_0 \
  -z models/tokenizer.bin -o models/synth110M_q4_0.gguf
make_once models/synth110M_iq4_xs.gguf "$bin" convert models/synth110M.bin --to gguf --type iq4_xs \
  -z models/tokenizer.bin -o models/synth110M_iq4_xs.gguf
make_once models/tinyllama.bin "$bin" synth tinyllama --seed 42 -o models/tinyllama.bin
echo "$tinyllama_sha256  models/tinyllama.bin" | sha256sum -c --quiet
make_once models/tinyllama_q80.bin "$bin" convert models/tinyllama.bin --to q80 -o models/tinyllama_q80.bin
make_once models/tinyllama_q4_0.gguf "$bin" convert models/tinyllama.bin --to gguf --type q4_0 \
  -z models/tokenizer.bin -o models/tinyllama_q4_0.gguf
