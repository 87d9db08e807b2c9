#!/usr/bin/env bash
# The issue-4 benchmark matrix: `pocketlm bench` on the stories15M-shaped models (q80 and
# fp32, seq_len 256, 256 tokens) for every backend and 1 or 2 threads, as one markdown table
# with the ratio to `reference` at the same thread count, measured in the same run, and the
# fraction of the streaming read bandwidth the same process measured at that thread count
# (bench's probe: the decode's weight bytes per second / the limit).
# Usage: bench/matrix.sh [BUILD_DIR]   (env: REPEATS=5 KERNELS="reference tiled4 avx2 avxvnni")
# The synth15M models come from bench/peak-rss.sh (pocketlm synth + convert).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
repeats=${REPEATS:-5}
kernels=${KERNELS:-"reference tiled4 avx2 avxvnni"}
bin=$build/pocketlm
echo "| model | kernels | threads | decode tok/s | x reference | ms/token median (p10-p90) | prefill tok/s | GB/s | read limit GB/s | fraction |"
echo "|---|---|---:|---:|---:|---|---:|---:|---:|---:|"
for model in synth15M_q80 synth15M; do
  for threads in 1 2; do
    ref=""
    for k in $kernels; do
      out=$("$bin" bench "models/$model.bin" -z models/tokenizer.bin --seq-len 256 -n 256 --repeats "$repeats" \
        --kernels "$k" --threads "$threads")
      decode=$(awk -F'|' '/^decode tok\/s/ {split($2, a, " "); print a[1]}' <<<"$out")
      ms=$(awk -F'|' '/^decode ms\/token/ {sub(/^ */, "", $2); print $2}' <<<"$out" | sed -E 's/median ([0-9.]+), p10-p90 ([0-9.-]+),.*/\1 (\2)/')
      prefill=$(awk -F'|' '/^prefill tok\/s/ {split($2, a, " "); print a[1]}' <<<"$out")
      gbs=$(awk -F'|' '/^effective GB\/s/ {split($2, a, " "); print a[1]}' <<<"$out")
      limit=$(awk -F'|' '/^read bandwidth/ {split($2, a, " "); print a[1]}' <<<"$out")
      fraction=$(awk -F'|' '/^fraction of limit/ {split($2, a, " "); print a[1]}' <<<"$out")
      [ -n "$ref" ] || ref=$decode
      printf '| %s | %s | %s | %s | %.2f | %s | %s | %s | %s | %s |\n' "$model" "$k" "$threads" "$decode" \
        "$(echo "$decode / $ref" | bc -l)" "$ms" "$prefill" "$gbs" "$limit" "$fraction"
    done
  done
done
