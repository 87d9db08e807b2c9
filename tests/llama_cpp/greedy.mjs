// Greedy continuation of a prompt by llama.cpp (node-llama-cpp, CPU, one thread): prints the
// prompt's token ids (BOS first) and the next N token ids as JSON.
// Usage: node greedy.mjs MODEL.gguf PROMPT N
import { getLlama } from "node-llama-cpp";

const [modelPath, prompt, n] = [process.argv[2], process.argv[3], Number(process.argv[4] || 40)];
const llama = await getLlama({ gpu: false, build: "never", logLevel: "error" });
const model = await llama.loadModel({ modelPath });
const context = await model.createContext({ contextSize: 512, batchSize: 512, threads: 1 });
const sequence = context.getSequence();
const tokens = [model.tokens.bos, ...model.tokenize(prompt, false)];
const next = [];
for await (const token of sequence.evaluate(tokens, { temperature: 0 })) {
  next.push(token);
  if (next.length >= n) break;
}
console.log(JSON.stringify({ prompt: tokens, next }));
process.exit(0);
