#!/usr/bin/env bash
# Decode from DRAM against the machine's own limit, as a markdown table: for each build given
# (before and after a change: the rounds of all are interleaved, so that the machine's drift hits
# each alike), each model larger than the cache (bench/dram-models.sh makes them: one per weight
# type, f32, q80, Q4_0 and IQ4_XS), each backend of KERNELS and 1 and 2 threads,
# `pocketlm bench --json` ROUNDS times; the medians of decode tok/s, of the DRAM read rate the
# same run measured, and of decode's fraction of it, weights alone and with the kv cache reads,
# and against the DRAM probes read right before and after each repeat.
#   bench/dram-fractions.sh build                 # or: bench/dram-fractions.sh /tmp/base/build build
#   KERNELS="avx512 avx2" THREADS=1 bench/dram-fractions.sh build   # the table per backend
# env: MODELS="synth42M.bin synth110M_q80.bin synth110M_q4_0.gguf synth110M_iq4_xs.gguf"
#      THREADS="1 2" KERNELS= (the default backend) ROUNDS=5 REPEATS=3 N=192 ARGS=
set -euo pipefail
builds=("${@:-build}")
cd "$(dirname "$0")/.."
models=${MODELS:-synth42M.bin synth110M_q80.bin synth110M_q4_0.gguf synth110M_iq4_xs.gguf}
kernels=${KERNELS:-default}
threads=${THREADS:-1 2}
rounds=${ROUNDS:-5}
repeats=${REPEATS:-3}
n=${N:-192}
args=${ARGS:-}
for m in $models; do
  [[ -f models/$m ]] || { echo "dram-fractions: models/$m: missing (bench/dram-models.sh ${builds[-1]})" >&2; exit 1; }
done
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for ((r = 0; r < rounds; ++r)); do
  for m in $models; do
    for k in $kernels; do
      for t in $threads; do
        for b in "${!builds[@]}"; do
          tok=()
          [[ $m == *.gguf ]] || tok=(-z models/tokenizer.bin)  # a GGUF file carries its own
          kflag=()
          [[ $k == default ]] || kflag=(--kernels "$k")
          # shellcheck disable=SC2086
          "${builds[$b]}/pocketlm" bench "models/$m" "${tok[@]}" "${kflag[@]}" --seq-len 256 -n "$n" \
            --repeats "$repeats" --threads "$t" --json $args > "$out/$b.$m.$k.$t.$r.json"
        done
      done
    done
  done
done
echo "| build | model | threads | kernels | decode tok/s | DRAM GB/s | fraction (weights) | fraction (weights + kv cache) | paired fraction |"
echo "|---|---|---:|---|---:|---:|---:|---:|---:|"
for k in $kernels; do
  for m in $models; do
    for t in $threads; do
      for b in "${!builds[@]}"; do
        /usr/bin/python3 - "${builds[$b]}" "$m" "$t" "$out/$b.$m.$k.$t".*.json << 'EOF'
import json, statistics, sys
runs = [json.load(open(f)) for f in sys.argv[4:]]
def med(key, fmt):  # "n/a" for a key an older pocketlm does not print
    values = [r[key] for r in runs if key in r]
    return format(statistics.median(values), fmt) if values else "n/a"
for r in runs:
    r["dram_gb_per_s"] = r["read_bandwidth"]["dram_gb_per_s"]
print(f"| {sys.argv[1]} | {sys.argv[2]} | {sys.argv[3]} | {runs[0]['kernels']} | {med('decode_tok_per_s', '.1f')} | "
      f"{med('dram_gb_per_s', '.1f')} | {med('fraction_of_limit', '.2f')} | {med('fraction_of_limit_with_kv', '.2f')} | "
      f"{med('fraction_of_dram_paired', '.2f')} |")
EOF
      done
    done
  done
done
echo
echo "($rounds rounds of bench -n $n --seq-len 256 --repeats $repeats $args; medians; models from bench/dram-models.sh;"
echo " the kernels column is the backend that ran: --kernels as given, else the default)"
