#!/usr/bin/env bash
# Runs every fuzz target for SECONDS each from fresh seeds (fuzz/make-corpus.sh) plus what
# earlier runs added to the corpus; fails when any target crashes, leaks, hangs (> 25 s for
# one input) or trips ASan/UBSan. Prints executions per target and in total.
#   fuzz/run-fuzz.sh BUILD_DIR SECONDS [smoke]   (make fuzz-smoke: 60 s each; make fuzz: 600 s)
# With "smoke" every target starts from the fixed seeds with -seed=1 and stops after a fixed
# number of inputs (about half of what 60 s reaches on the 2-core development machine), so a
# CI run replays the same inputs that were checked here instead of exploring new ones at
# random: a smoke test must not fail by luck. `make fuzz` explores freely.
# Crash inputs land in BUILD_DIR/fuzz-artifacts/, logs in BUILD_DIR/fuzz-logs/. Targets run
# FUZZ_JOBS at a time (default: the cores).
set -uo pipefail
cd "$(dirname "$0")/.."
build=$(cd "${1:?usage: fuzz/run-fuzz.sh BUILD_DIR SECONDS}" && pwd)
seconds=${2:?usage: fuzz/run-fuzz.sh BUILD_DIR SECONDS}
mode=${3:-explore}
declare -A smoke_runs=([checkpoint]=2000 [gguf]=60000 [tokenizer_load]=120000 [encode]=20000 [decode_stream]=100000
                       [utf16]=3000000 [byte_size]=5000000 [cli]=15000 [sampler]=250000
                       [osk_script]=200000 [device_profile]=200000)
targets=(checkpoint gguf tokenizer_load encode decode_stream utf16 byte_size cli sampler osk_script device_profile)
if [[ $mode == smoke ]]; then  # only the fixed seeds, made afresh
  rm -rf "$build/smoke-corpus"
  POCKETLM_BIN="$build/pocketlm" fuzz/make-corpus.sh "$build/smoke-corpus" >/dev/null || exit 1
else
  POCKETLM_BIN="$build/pocketlm" fuzz/make-corpus.sh "$build/corpus" >/dev/null || exit 1
fi
mkdir -p "$build/fuzz-artifacts" "$build/fuzz-logs"
summary=$build/fuzz-logs/summary.txt
: >"$summary"
# One target: its log, and its summary line in fuzz-logs/fuzz_T.line ("ok" or "FAILED").
run_target() {
  local t=$1 log=$build/fuzz-logs/fuzz_$1.log extra=() corpus=("$build/corpus/fuzz_$1") start rc execs
  [[ $t == cli ]] && extra=(-close_fd_mask=3)  # the CLI prints stories and errors
  if [[ $mode == smoke ]]; then
    extra+=(-seed=1 -runs="${smoke_runs[$t]}")
    corpus=("$build/smoke-corpus/fuzz_$t")
  fi
  start=$(date +%s)
  "$build/fuzz/fuzz_$t" -max_total_time="$seconds" -timeout=25 -print_final_stats=1 \
    -artifact_prefix="$build/fuzz-artifacts/fuzz_${t}-" "${extra[@]}" "${corpus[@]}" >"$log" 2>&1
  rc=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  printf '%-22s %12s executions  %4ss  %s\n' "fuzz_$t" "${execs:-0}" "$(( $(date +%s) - start ))" \
    "$([[ $rc == 0 ]] && echo ok || echo "FAILED (exit $rc)")" >"$build/fuzz-logs/fuzz_$t.line"
}
# Each target is one process on one core: as many at a time as there are cores (FUZZ_JOBS).
# The smoke inputs are fixed per target, so running them side by side changes no result.
jobs_max=${FUZZ_JOBS:-$(nproc 2>/dev/null || echo 2)}
for t in "${targets[@]}"; do
  while (( $(jobs -rp | wc -l) >= jobs_max )); do wait -n; done
  run_target "$t" &
done
wait
failed=0 total=0
for t in "${targets[@]}"; do
  line=$(cat "$build/fuzz-logs/fuzz_$t.line")
  echo "$line" | tee -a "$summary"
  total=$((total + $(awk '{print $2}' <<<"$line")))
  if [[ $line == *FAILED* ]]; then
    failed=1
    grep -E 'ERROR|runtime error|SUMMARY|Test unit written|^    #[0-9]' "$build/fuzz-logs/fuzz_$t.log" | head -30
  fi
done
echo "total                  $(printf '%12s' "$total") executions" | tee -a "$summary"
exit $failed
