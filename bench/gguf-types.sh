#!/usr/bin/env bash
# Decode speed of the stories15M-shaped model in each weight type, in one run with the rounds
# interleaved (q80 q8_0 q4_0 q80 q8_0 q4_0 ...) so that the machine's drift and other load hit
# every type alike; prints each median decode tok/s, weight bytes per token, and the ratio to
# llama2.c's q80. Makes what it needs under models/: synth15M.bin and synth15M_q80.bin (as
# `make synth-models`), and synth15M_{f32,q8_0,q4_0}.gguf (`pocketlm convert --to gguf`).
#   bench/gguf-types.sh [BUILD_DIR]      env: ROUNDS=7 N=256 ARGS="--kernels avx2 --threads 1"
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
p=$build/pocketlm
tok=${TOKENIZER:-models/tokenizer.bin}
rounds=${ROUNDS:-7}
n=${N:-256}
args=${ARGS:-}
mkdir -p models
[[ -f $tok ]] || scripts/get-models models >/dev/null
[[ -f models/synth15M.bin ]] || "$p" synth stories15M --seed 42 -o models/synth15M.bin >/dev/null
[[ -f models/synth15M_q80.bin ]] || "$p" convert models/synth15M.bin --to q80 -o models/synth15M_q80.bin >/dev/null
for t in q8_0 q4_0; do
  [[ -f models/synth15M_$t.gguf ]] || "$p" convert models/synth15M.bin --to gguf --type $t -z "$tok" -o models/synth15M_$t.gguf >/dev/null
done
models=(models/synth15M_q80.bin models/synth15M_q8_0.gguf models/synth15M_q4_0.gguf)
declare -A runs bytes
for ((i = 0; i < rounds; ++i)); do
  for m in "${models[@]}"; do
    # shellcheck disable=SC2086
    out=$("$p" bench "$m" -z "$tok" --seq-len 256 -n "$n" --repeats 1 $args)
    runs[$m]+="$(awk -F'|' '/^decode tok\/s/ {split($2, v, " "); print v[1]}' <<<"$out") "
    bytes[$m]=$(awk -F'|' '/^weight bytes\/token/ {split($2, v, " "); print v[1]}' <<<"$out")
  done
done
median() { printf '%s\n' "$@" | sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
base=""
printf '%-28s %14s %16s %10s\n' model "decode tok/s" "bytes/token" "x q80"
for m in "${models[@]}"; do
  # shellcheck disable=SC2086
  med=$(median ${runs[$m]})
  [[ -n $base ]] || base=$med
  printf '%-28s %14s %16s %10s\n' "$(basename "$m")" "$med" "${bytes[$m]}" "$(echo "$med / $base" | bc -l | cut -c1-5)"
done
echo "($n tokens, seq_len 256, $rounds interleaved rounds, medians; $args)"
