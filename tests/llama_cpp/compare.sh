#!/usr/bin/env bash
# A manual cross-check with llama.cpp itself (make check-llama-cpp; not part of make test: the
# npm package brings about 700 MB of prebuilt llama.cpp binaries). stories260K is converted to
# GGUF f32, q8_0 and q4_0 with its tokenizer embedded; llama.cpp (node-llama-cpp, CPU) and
# pocketlm then continue the same prompt greedily, and the script prints whether the prompt
# tokens agree and how many generated tokens agree before the first difference. The two
# programs round differently (llama.cpp's kernels are not llama2.c's), so long runs may part.
#   tests/llama_cpp/compare.sh [BUILD_DIR] [N]     needs node and npm
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
n=${2:-150}
prompt=${PROMPT:-Once upon a time}
shared=${POCKETLM_SHARED:-../shared}
dir=$build/llama-cpp-npm
mkdir -p "$dir"
cp tests/llama_cpp/package.json tests/llama_cpp/greedy.mjs "$dir/"
[[ -d $dir/node_modules/node-llama-cpp ]] || (cd "$dir" && npm install --no-audit --no-fund --silent >/dev/null)
for t in f32 q8_0 q4_0; do
  model=$dir/stories260K_$t.gguf
  "$build/pocketlm" convert "$shared/models/stories260K.bin" --to gguf --type "$t" -z "$shared/models/tok512.bin" -o "$model" >/dev/null
  "$build/pocketlm" run "$model" -t 0 -n $((n + 16)) -i "$prompt" --token-log "$dir/pocketlm_$t.log" >/dev/null 2>&1
  (cd "$dir" && node greedy.mjs "stories260K_$t.gguf" "$prompt" "$n") >"$dir/llama_$t.json"
  node -e '
    const fs = require("fs");
    const [log, js, type, n] = process.argv.slice(1);
    const lines = fs.readFileSync(log, "utf8").trim().split("\n");
    const prompt = lines[0].split(" ").slice(1).map(Number);
    const ours = lines.slice(prompt.length).map(Number);  // the log repeats the forced prompt tokens
    const theirs = JSON.parse(fs.readFileSync(js, "utf8"));
    let same = 0;
    while (same < Math.min(ours.length, theirs.next.length) && ours[same] === theirs.next[same]) ++same;
    const p = JSON.stringify(prompt) === JSON.stringify(theirs.prompt) ? "prompt tokens equal" : "PROMPT TOKENS DIFFER";
    console.log(`${type.padEnd(5)} ${p}; first ${same} of ${Math.min(n, ours.length)} generated tokens equal`);
  ' "$dir/pocketlm_$t.log" "$dir/llama_$t.json" "$t" "$n"
done
