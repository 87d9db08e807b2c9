#!/usr/bin/env bash
# Peak resident memory of a whole `pocketlm run` process on the stories15M-shaped synthetic
# model in q80 (issue: fit the PSP's 24 MiB heap), next to the memory plan of the same run.
# Builds models/synth15M.bin and models/synth15M_q80.bin with `pocketlm synth`/`convert`
# when missing. Needs GNU time (Debian package `time`).
# Usage: bench/peak-rss.sh [BUILD_DIR]   (env: STEPS=256 SEQ_LEN=256 HEAP=24MiB)
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
[ -f models/synth15M.bin ] || "$bin" synth stories15M --seed 42 -o models/synth15M.bin
[ -f models/synth15M_q80.bin ] || "$bin" convert models/synth15M.bin --to q80 -o models/synth15M_q80.bin

echo "\$ $bin plan models/synth15M_q80.bin -z $tokenizer --seq-len $seq_len --heap $heap"
"$bin" plan models/synth15M_q80.bin -z "$tokenizer" --seq-len "$seq_len" --heap "$heap"
echo
cmd=("$bin" run models/synth15M_q80.bin -z "$tokenizer" -n "$steps" --seq-len "$seq_len" --heap "$heap" -s 42 -i "Once upon a time")
echo "\$ /usr/bin/time -v ${cmd[*]}"
log=$(mktemp)
/usr/bin/time -v "${cmd[@]}" >/dev/null 2>"$log"
grep -E '^pocketlm:|achieved' "$log" || true
rss_kib=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$log")
rm -f "$log"
printf 'peak RSS: %s KiB = %s bytes (%.2f MiB); budget %s\n' "$rss_kib" "$((rss_kib * 1024))" \
  "$(echo "$rss_kib / 1024" | bc -l)" "$heap"
