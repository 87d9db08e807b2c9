#!/usr/bin/env bash
# A/B decode speed of two pocketlm binaries on the same model, runs interleaved (A B A B ...)
# so that the machine's drift and other load hit both alike; prints each median decode tok/s
# and the ratio B / A. For "did this change slow decode down?" with a baseline build:
#   git worktree add /tmp/base <commit> && cmake -S /tmp/base -B /tmp/base/build && cmake --build ...
#   bench/ab.sh /tmp/base/build/pocketlm build/pocketlm models/synth15M_q80.bin
# env: ROUNDS=7 N=256 ARGS="--kernels avx2 --threads 1"
set -euo pipefail
a=$1 b=$2 model=$3
tok=${TOKENIZER:-models/tokenizer.bin}
rounds=${ROUNDS:-7}
n=${N:-256}
args=${ARGS:-}
decode() {
  # shellcheck disable=SC2086
  "$1" bench "$model" -z "$tok" --seq-len 256 -n "$n" --repeats 1 $args |
    awk -F'|' '/^decode tok\/s/ {split($2, v, " "); print v[1]}'
}
ra=() rb=()
for ((i = 0; i < rounds; ++i)); do
  ra+=("$(decode "$a")")
  rb+=("$(decode "$b")")
done
median() { printf '%s\n' "$@" | sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
ma=$(median "${ra[@]}") mb=$(median "${rb[@]}")
echo "A $a: decode tok/s median $ma (${ra[*]})"
echo "B $b: decode tok/s median $mb (${rb[*]})"
echo "B / A = $(echo "$mb / $ma" | bc -l | cut -c1-6)  ($model, $n tokens, $rounds rounds, $args)"
