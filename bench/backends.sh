#!/usr/bin/env bash
# Decode of one model by several backends, rounds interleaved (avx2 avxvnni avx512, avx2 ...) so
# that other load hits every backend alike: per backend the median over rounds of the decode tok/s at the median ms/token, its ratio to the
# first backend measured in the same run, and bench's read limit for the tier the weights live in
# (llc or dram) with the fraction of it. Usage:
#   bench/backends.sh MODEL [BUILD_DIR]
# env: KERNELS="avx2 avxvnni avx512" THREADS=1 ROUNDS=3 N=128 SEQ_LEN=256 TOKENIZER=models/tokenizer.bin
#      ARGS="" (more bench flags)
set -euo pipefail
model=$1
build=${2:-build}
kernels=${KERNELS:-"avx2 avxvnni avx512"}
threads=${THREADS:-1}
rounds=${ROUNDS:-3}
n=${N:-128}
seq_len=${SEQ_LEN:-256}
tok=${TOKENIZER:-models/tokenizer.bin}
args=${ARGS:-}
declare -A rates limit fraction
field() { awk -F'|' -v key="$1" '$1 ~ "^" key {split($2, v, " "); print v[1]}'; }
for ((i = 0; i < rounds; ++i)); do
  for k in $kernels; do
    # shellcheck disable=SC2086
    out=$("$build/pocketlm" bench "$model" -z "$tok" --seq-len "$seq_len" -n "$n" --repeats 1 --kernels "$k" \
      --threads "$threads" $args)
    # The rate at the median ms/token: one preempted pass on a shared machine does not move it.
    rates[$k]+="$(awk -F'|' '/^decode tok\/s/ {sub(/.*; /, "", $2); split($2, v, " "); print v[1]}' <<<"$out") "
    limit[$k]=$(awk -F'|' '/^read bandwidth/ {sub(/^ */, "", $2); print $2}' <<<"$out")
    fraction[$k]+="$(field "fraction of limit" <<<"$out") "
  done
done
median() { printf '%s\n' "$@" | sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
echo "$model, $threads thread(s), $n passes, $rounds rounds interleaved"
echo "| kernels | decode tok/s (median) | x ${kernels%% *} | fraction of the tier's limit (median) | limit, last round |"
echo "|---|---:|---:|---:|---|"
first=""
for k in $kernels; do
  # shellcheck disable=SC2086
  m=$(median ${rates[$k]})
  [ -n "$first" ] || first=$m
  # shellcheck disable=SC2086
  printf '| %s | %s | %.2f | %s | %s |\n' "$k" "$m" "$(echo "$m / $first" | bc -l)" "$(median ${fraction[$k]})" "${limit[$k]}"
done
