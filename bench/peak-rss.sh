#!/usr/bin/env bash
# Peak resident memory of a whole `pocketlm run` process on a synthetic model of a real shape
# (default the stories15M shape in q80; MODEL=synth42M_q80 or synth110M_q80 for the shapes that
# stream their weights from the file under the PSP's 24 MiB), next to the memory plan of the
# same run. Builds models/synthNM.bin and models/synthNM_q80.bin with `pocketlm synth`/
# `convert` when missing. Needs GNU time (Debian package `time`).
# Usage: bench/peak-rss.sh [BUILD_DIR]   (env: MODEL=synth15M_q80 STEPS=256 SEQ_LEN=256 HEAP=24MiB)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
bin=$build/pocketlm
steps=${STEPS:-256}
seq_len=${SEQ_LEN:-256}
heap=${HEAP:-24MiB}
tokenizer=models/tokenizer.bin
[ -x "$bin" ] || { echo "peak-rss: build first (make build)" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "peak-rss: needs GNU time: apt-get install time" >&2; exit 1; }
scripts/get-models models >/dev/null
[ -f "$tokenizer" ] || { echo "peak-rss: $tokenizer is missing (it comes from ../shared/models)" >&2; exit 1; }
model=${MODEL:-synth15M_q80}
size=${model#synth}
size=${size%_q80}
[ -f "models/synth$size.bin" ] || "$bin" synth "stories$size" --seed 42 -o "models/synth$size.bin"
[ -f "models/synth${size}_q80.bin" ] || "$bin" convert "models/synth$size.bin" --to q80 -o "models/synth${size}_q80.bin"

echo "\$ $bin plan models/$model.bin -z $tokenizer --seq-len $seq_len --heap $heap"
"$bin" plan models/$model.bin -z "$tokenizer" --seq-len "$seq_len" --heap "$heap"
echo
cmd=("$bin" run models/$model.bin -z "$tokenizer" -n "$steps" --seq-len "$seq_len" --heap "$heap" -s 42 -i "Once upon a time")
echo "\$ /usr/bin/time -v ${cmd[*]}"
log=$(mktemp)
/usr/bin/time -v "${cmd[@]}" >/dev/null 2>"$log"
grep -E '^pocketlm:|achieved' "$log" || true
rss_kib=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$log")
rm -f "$log"
printf 'peak RSS: %s KiB = %s bytes (%.2f MiB); budget %s\n' "$rss_kib" "$((rss_kib * 1024))" \
  "$(echo "$rss_kib / 1024" | bc -l)" "$heap"
