#!/usr/bin/env bash
# End-to-end speed of `pocketlm run` on the models in models/ (see scripts/get-models),
# one line per model and kernel backend: decode tok/s as pocketlm reports it, median of
# REPEATS runs. Usage: bench/run-bench.sh [BUILD_DIR]   (env: STEPS=256 REPEATS=5)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
steps=${STEPS:-256}
repeats=${REPEATS:-5}
bin=$build/pocketlm
[ -x "$bin" ] || { echo "run-bench: build first (make build)" >&2; exit 1; }

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

printf '%-22s %-10s %12s %12s\n' model kernels "decode tok/s" "prefill tok/s"
# model:tokenizer pairs; synth15M* come from bench/peak-rss.sh (pocketlm synth/convert).
for pair in stories260K.bin:tok512.bin stories260K_q80.bin:tok512.bin synth15M.bin:tokenizer.bin \
            synth15M_q80.bin:tokenizer.bin; do
  model=models/${pair%%:*}
  tokenizer=models/${pair##*:}
  [ -f "$model" ] && [ -f "$tokenizer" ] || continue
  # Every backend this build and CPU have ("pocketlm run --help" lists them; an unavailable
  # one is refused in one line, so it is skipped).
  for kernels in reference tiled4 avx2 avxvnni neon; do
    "$bin" run "$model" -z "$tokenizer" -t 0 -n 1 --kernels "$kernels" >/dev/null 2>&1 || continue
    decode=(); prefill=()
    for _ in $(seq "$repeats"); do
      line=$("$bin" run "$model" -z "$tokenizer" -t 0 -n "$steps" -i "Once upon a time" --kernels "$kernels" 2>&1 >/dev/null | grep '^pocketlm: prompt')
      decode+=("$(sed -E 's/.*decode ([0-9.]+) tok\/s.*/\1/' <<<"$line")")
      prefill+=("$(sed -E 's/.*prefill ([0-9.]+) tok\/s.*/\1/' <<<"$line")")
    done
    printf '%-22s %-10s %12s %12s\n' "$(basename "$model")" "$kernels" \
      "$(printf '%s\n' "${decode[@]}" | median)" "$(printf '%s\n' "${prefill[@]}" | median)"
  done
done
