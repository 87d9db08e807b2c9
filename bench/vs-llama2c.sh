#!/usr/bin/env bash
# Whole-process greedy generation, pocketlm against llama2.c's run.c on the same model, runs
# interleaved (run.c, pocketlm, run.c, ...) so that the machine's drift hits both alike: the
# median wall time of each, the ratio run.c / pocketlm (above 1: pocketlm is faster) and whether
# the two printed the same text. run.c is built here from a llama2.c checkout with the flags its
# Makefile's fastest target uses (`-Ofast -march=native`); without a checkout the script says so
# and exits 2. Nothing of llama2.c is kept in this repository.
#   bench/vs-llama2c.sh ~/src/llama2.c build                # synth15M.bin, 256 tokens
# env: MODEL=models/synth15M.bin TOKENIZER=models/tokenizer.bin ROUNDS=7 N=256 ARGS="--threads 1"
#      CC=gcc CFLAGS="-Ofast -march=native"
set -euo pipefail
checkout=${1:-}
build=${2:-build}
cd "$(dirname "$0")/.."
if [[ -z $checkout || ! -f $checkout/run.c ]]; then
  echo "vs-llama2c: no llama2.c checkout given (${checkout:-none}): pass one holding run.c," \
    "e.g. git clone https://github.com/karpathy/llama2.c" >&2
  exit 2
fi
model=${MODEL:-models/synth15M.bin}
tok=${TOKENIZER:-models/tokenizer.bin}
rounds=${ROUNDS:-7}
n=${N:-256}
args=${ARGS:---threads 1}
prompt="Once upon a time"
for f in "$model" "$tok" "$build/pocketlm"; do
  [[ -f $f ]] || { echo "vs-llama2c: $f: missing (make build synth-models)" >&2; exit 1; }
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cc=${CC:-gcc}
cflags=${CFLAGS:--Ofast -march=native}
# shellcheck disable=SC2086
"$cc" $cflags -o "$work/run" "$checkout/run.c" -lm
echo "run.c: $("$cc" --version | head -1), $cflags, from $checkout" \
  "($(git -C "$checkout" rev-parse --short HEAD 2>/dev/null || echo 'not a git checkout'))"

# Wall seconds of one command, its stdout (the generated text) kept in $2.
wall() {
  local out=$1
  shift
  local t0=$EPOCHREALTIME
  "$@" > "$out" 2> /dev/null
  local t1=$EPOCHREALTIME
  echo "$t1 - $t0" | bc -l
}
tr=() tp=()
for ((i = 0; i < rounds; ++i)); do
  tr+=("$(wall "$work/run.txt" "$work/run" "$model" -z "$tok" -t 0 -n "$n" -i "$prompt")")
  # shellcheck disable=SC2086
  tp+=("$(wall "$work/pocketlm.txt" "$build/pocketlm" run "$model" -z "$tok" -t 0 -n "$n" -i "$prompt" $args)")
done
median() { printf '%s\n' "$@" | sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
mr=$(median "${tr[@]}") mp=$(median "${tp[@]}")
printf 'run.c    : median %.3f s (%s)\n' "$mr" "$(printf '%.3f ' "${tr[@]}")"
printf 'pocketlm : median %.3f s (%s)\n' "$mp" "$(printf '%.3f ' "${tp[@]}")"
printf 'run.c / pocketlm = %.3f  (%s, %s tokens, %s rounds, pocketlm %s)\n' \
  "$(echo "$mr / $mp" | bc -l)" "$model" "$n" "$rounds" "$args"
if cmp -s "$work/run.txt" "$work/pocketlm.txt"; then
  echo "text: identical"
else
  echo "text: DIFFERENT (diff of run.c's and pocketlm's stdout follows)"
  diff "$work/run.txt" "$work/pocketlm.txt" | head -20
  exit 1
fi
