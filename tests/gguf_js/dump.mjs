// Prints what Hugging Face's GGUF parser (@huggingface/gguf) reads from a file, as JSON:
// the metadata (arrays replaced by their length and first and last elements, so that a
// 32000-token vocabulary stays small) and the tensor table. Usage: node dump.mjs FILE.gguf
import { gguf } from "@huggingface/gguf";

const file = process.argv[2];
const { metadata, tensorInfos } = await gguf(file, { allowLocalFile: true });
const big = (_, v) => (typeof v === "bigint" ? Number(v) : v);
const meta = {};
for (const [k, v] of Object.entries(metadata)) {
  meta[k] = Array.isArray(v) ? { length: v.length, first: v[0], last: v[v.length - 1] } : v;
}
console.log(JSON.stringify({ metadata: meta, tensorInfos }, big));
