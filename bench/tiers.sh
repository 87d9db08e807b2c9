#!/usr/bin/env bash
# Where the weights go on each device: `pocketlm plan --device D` for stories260K and the
# synthetic stories15M/42M/110M shapes in q80 (seq_len 256), summarised as one markdown table
# (RAM per tier, what stays in storage, storage bytes per token, fits or not), with the
# projected device tok/s from `pocketlm bench --device D` (an estimate: the profile's read model
# and compute rate; see `pocketlm devices`). Models come from make models / make synth-models
# (42M and 110M: bench/peak-rss.sh makes them).
# Usage: bench/tiers.sh [BUILD_DIR]   (env: DEVICES="psp esp32s3")
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-build}/pocketlm
devices=${DEVICES:-"psp esp32s3"}
echo "| model | device | RAM by tier | in storage | storage read per token | fits | projected decode tok/s |"
echo "|---|---|---|---:|---:|---|---:|"
for pair in stories260K.bin:tok512.bin synth15M_q80.bin:tokenizer.bin synth42M_q80.bin:tokenizer.bin \
            synth110M_q80.bin:tokenizer.bin; do
  model=models/${pair%%:*} tok=models/${pair##*:}
  [ -f "$model" ] || continue
  for d in $devices; do
    plan=$("$bin" plan "$model" -z "$tok" --device "$d" --seq-len 256 2>/dev/null || true)
    ram=$(awk -F'|' '/^tier .*\(RAM/ {split($1, w, " "); name=w[2] " "} /^total \((tier|arena)\)/ {
            gsub(/^ +| +$/, "", $3); printf "%s%s%s", sep, name, $3; sep=", "}' <<<"$plan")
    stored=$(awk -F'|' '/^total \(in storage\)/ {gsub(/^ +| +$/, "", $3); print $3}' <<<"$plan")
    per_token=$(awk -F'|' '/^read per token/ {gsub(/^ +| +$/, "", $3); print $3}' <<<"$plan")
    fits=yes
    grep -qE "OVER BUDGET|DOES NOT FIT" <<<"$plan" && fits=no
    projected=n/a
    if [ "$fits" = yes ]; then
      projected=$("$bin" bench "$model" -z "$tok" --device "$d" --seq-len 256 -n 8 --repeats 1 |
        awk -F'|' '/^projected (decode )?tok\/s/ {split($2, v, " "); print v[1]}')
    fi
    echo "| $(basename "$model") | $d | $ram | ${stored:-0 B} | ${per_token:-0 B} | $fits | $projected |"
  done
done
