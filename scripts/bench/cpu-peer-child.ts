/**
 * One side of the cpu-peer bench in its own process (so its peak RSS is its own): loads a packed INT4 model on the
 * CPU backend, runs one warm-up prompt (as llama-bench does), then prints one JSON line with prefill tok/s for a
 * 128-token prompt and decode tok/s (tokens after the first, stop tokens off) after 128 and after 1024 tokens; then,
 * as llama-batched-bench measures them, BATCH prompts of 128 tokens generated together (prefilled in one step, then
 * BATCH_NEW decode steps of BATCH tokens): prefill and decode tok/s over all sequences.
 * Usage: tsx scripts/bench/cpu-peer-child.ts INT4_DIR THREADS NEW_TOKENS BATCH BATCH_NEW
 */
import { loadModel } from '../../electron/worker/runtime/binding.js';

const [dir, threadsArg, newArg, batchArg, batchNewArg] = process.argv.slice(2);
if (!dir || !threadsArg || !newArg || !batchArg || !batchNewArg) {
  console.error('usage: cpu-peer-child INT4_DIR THREADS NEW_TOKENS BATCH BATCH_NEW');
  process.exit(2);
}
const threads = Number(threadsArg);
const newTokens = Number(newArg);
const batch = Number(batchArg);
const batchNew = Number(batchNewArg);
const model = await loadModel({ dir, weights: 'int4', backend: 'cpu', threads, maxContext: 1024 + newTokens + 8 });
try {
  const vocab = model.info().vocabSize;
  // Sequence s's prompt: distinct token ids, so that the sequences of a batch route differently.
  const prompt = (n: number, s = 0) => Array.from({ length: n }, (_, i) => (100 + 31 * s + i * 7919) % vocab);
  const run = async (n: number) => {
    const out = await model.generate({ prompts: [prompt(n)], maxNewTokens: newTokens + 1, stopTokens: [] });
    return out.results[0]!;
  };
  // Warm-up, as llama-bench does one: the first pass touches every mapped page of the model.
  await model.generate({ prompts: [prompt(128)], maxNewTokens: 2, stopTokens: [] });
  const short = await run(128);
  const long = await run(1024);
  const together = await model.generate({
    prompts: Array.from({ length: batch }, (_, s) => prompt(128, s + 1)),
    maxNewTokens: batchNew + 1,
    stopTokens: [],
    batch,
    prefillTokenBudget: batch * 128,
  });
  const st = together.stats;
  if (st.prefillSteps !== 1 || st.decodeSteps !== batchNew) {
    throw new Error(`batched run took ${st.prefillSteps} prefill and ${st.decodeSteps} decode steps, want 1 and ${batchNew}`);
  }
  console.log(
    JSON.stringify({
      prefillTps: (128 / short.ttftMs) * 1000,
      decode128Tps: short.decodeTokensPerSecond,
      decode1024Tps: long.decodeTokensPerSecond,
      batchPrefillTps: (batch * 128) / (st.prefillMs / 1000),
      batchDecodeTps: (batch * batchNew) / (st.decodeMs / 1000),
      maxRssBytes: process.resourceUsage().maxRSS * 1024,
      isa: model.info().cpuIsa ?? null,
    }),
  );
} finally {
  model.close();
}
