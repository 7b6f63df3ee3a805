/**
 * One side of the cpu-peer bench in its own process (so its peak RSS is its own): loads a packed INT4 model on the
 * CPU backend, runs one warm-up prompt (as llama-bench does), then prints one JSON line with prefill tok/s for a
 * 128-token prompt and decode tok/s (tokens after the first, stop tokens off) after 128 and after 1024 tokens.
 * Usage: tsx scripts/bench/cpu-peer-child.ts INT4_DIR THREADS NEW_TOKENS
 */
import { loadModel } from '../../electron/worker/runtime/binding.js';

const [dir, threadsArg, newArg] = process.argv.slice(2);
if (!dir || !threadsArg || !newArg) {
  console.error('usage: cpu-peer-child INT4_DIR THREADS NEW_TOKENS');
  process.exit(2);
}
const threads = Number(threadsArg);
const newTokens = Number(newArg);
const model = await loadModel({ dir, weights: 'int4', backend: 'cpu', threads, maxContext: 1024 + newTokens + 8 });
try {
  const vocab = model.info().vocabSize;
  const prompt = (n: number) => Array.from({ length: n }, (_, i) => (100 + i * 7919) % vocab);
  const run = async (n: number) => {
    const out = await model.generate({ prompts: [prompt(n)], maxNewTokens: newTokens + 1, stopTokens: [] });
    return out.results[0]!;
  };
  // Warm-up, as llama-bench does one: the first pass touches every mapped page of the model.
  await model.generate({ prompts: [prompt(128)], maxNewTokens: 2, stopTokens: [] });
  const short = await run(128);
  const long = await run(1024);
  console.log(
    JSON.stringify({
      prefillTps: (128 / short.ttftMs) * 1000,
      decode128Tps: short.decodeTokensPerSecond,
      decode1024Tps: long.decodeTokensPerSecond,
      maxRssBytes: process.resourceUsage().maxRSS * 1024,
      isa: model.info().cpuIsa ?? null,
    }),
  );
} finally {
  model.close();
}
