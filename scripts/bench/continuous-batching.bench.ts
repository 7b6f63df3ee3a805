/**
 * Static against continuous batching on the tiny model (CPU backend): 48 prompts whose responses end at different
 * lengths (stop tokens picked from their own greedy outputs), generated 8 at a time either as 6 separate batches
 * (each runs until its longest response ends) or as one job whose free places are refilled at once (`batch`).
 * Prints decode steps, wall time and their ratios; asserts nothing but that both give the same tokens. Then chunked
 * prefill: how long short prompts wait at most for a token beside a long prompt fed whole or in chunks.
 * Run alone with `npx tsx scripts/bench/continuous-batching.bench.ts`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

import { loadModel } from '../../electron/worker/runtime/binding.js';
import type { GenerateResult } from '../../electron/worker/runtime/binding.js';
import { packModel } from '../../electron/worker/runtime/pack.js';
import { makeTinyModel } from '../make-tiny-model.js';

type Row = { what: string; value: string; note: string };

const PROMPTS = 48;
const BATCH = 8;
const MAX_NEW = 96;
const LONG_PROMPT = 2048;
const CHUNK = 128;

/** Deterministic pseudo-random integers in [lo, hi]. */
function lcg(seed: number): (lo: number, hi: number) => number {
  let s = seed >>> 0;
  return (lo, hi) => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return lo + (s % (hi - lo + 1));
  };
}

/** Decode steps a schedule needs: a step gives every active prompt one token (the first comes from its prefill). */
function staticSteps(lengths: readonly number[]): number {
  let steps = 0;
  for (let i = 0; i < lengths.length; i += BATCH) steps += Math.max(0, ...lengths.slice(i, i + BATCH).map((n) => n - 1));
  return steps;
}

export async function bench(): Promise<Row[]> {
  const root = mkdtempSync(join(tmpdir(), 'horizon-bench-cb-'));
  const rows: Row[] = [];
  try {
    const tiny = await makeTinyModel(join(root, 'src'), { seed: 11 });
    await packModel({ src: tiny.dir, dst: join(root, 'int4') });
    const model = await loadModel({ dir: join(root, 'int4'), weights: 'int4', backend: 'cpu', threads: 2 });
    try {
      const rand = lcg(7);
      const vocab = tiny.config.vocab_size;
      const prompts = Array.from({ length: PROMPTS }, () => Array.from({ length: rand(8, 40) }, () => rand(3, vocab - 1)));
      // Stop tokens from the prompts' own outputs at random places, so that responses end at many lengths.
      const free = await model.generate({ prompts, maxNewTokens: MAX_NEW, stopTokens: [] });
      const stops = [...new Set(free.results.slice(0, 6).map((r) => r.tokens[rand(4, MAX_NEW - 1)] ?? 0))];

      const s0 = performance.now();
      const batched: GenerateResult[] = [];
      for (let i = 0; i < PROMPTS; i += BATCH) {
        batched.push(...(await model.generate({ prompts: prompts.slice(i, i + BATCH), maxNewTokens: MAX_NEW, stopTokens: stops })).results);
      }
      const staticMs = performance.now() - s0;
      const c0 = performance.now();
      const continuous = (await model.generate({ prompts, maxNewTokens: MAX_NEW, stopTokens: stops, batch: BATCH })).results;
      const continuousMs = performance.now() - c0;

      const same = continuous.every((r, i) => r.tokens.join() === batched[i]?.tokens.join());
      if (!same) throw new Error('continuous batching gave other tokens than static batches');
      const lengths = continuous.map((r) => r.tokens.length);
      const tokens = lengths.reduce((a, b) => a + b, 0);
      // Continuous: the busiest place decides; with refills the steps approach tokens / BATCH.
      const fewest = Math.ceil(tokens / BATCH);
      rows.push({ what: 'responses', value: `${PROMPTS}`, note: `${tokens} tokens, lengths ${Math.min(...lengths)}..${Math.max(...lengths)}, ${BATCH} at a time` });
      rows.push({ what: 'static batches', value: `${(staticMs / 1000).toFixed(2)} s`, note: `${staticSteps(lengths)} decode steps (each batch waits for its longest response)` });
      rows.push({ what: 'continuous batching', value: `${(continuousMs / 1000).toFixed(2)} s`, note: `at least ${fewest} decode steps` });
      rows.push({ what: 'wall ratio static / continuous', value: `${(staticMs / continuousMs).toFixed(2)}x`, note: 'same tokens for every prompt' });

      // Chunked prefill: four short prompts start together with a long one; how long the short ones wait at most
      // for a token when the long prompt is fed whole in the first step or in chunks of CHUNK tokens.
      const long = Array.from({ length: LONG_PROMPT }, () => rand(3, vocab - 1));
      const shorts = prompts.slice(0, 4);
      const longestWait = async (budget: number) => {
        const t0 = performance.now();
        const last = shorts.map(() => t0);
        let worst = 0;
        const out = await model.generate({ prompts: [...shorts, long], maxNewTokens: 32, stopTokens: [], prefillTokenBudget: budget }, (i) => {
          if (i >= shorts.length) return;
          const now = performance.now();
          worst = Math.max(worst, now - last[i]!);
          last[i] = now;
        });
        return { worst, ms: performance.now() - t0, out };
      };
      const whole = await longestWait(4096);
      const chunked = await longestWait(CHUNK);
      if (chunked.out.results.some((r, i) => r.tokens.join() !== whole.out.results[i]?.tokens.join())) {
        throw new Error('chunked prefill gave other tokens than whole prefill');
      }
      rows.push({ what: 'longest wait, whole prefill', value: `${whole.worst.toFixed(0)} ms`, note: `a short prompt's longest wait for a token beside a ${LONG_PROMPT}-token prompt fed in ${whole.out.stats.prefillSteps} step; ${(whole.ms / 1000).toFixed(2)} s in all` });
      rows.push({ what: `longest wait, chunks of ${CHUNK}`, value: `${chunked.worst.toFixed(0)} ms`, note: `${chunked.out.stats.prefillSteps} prefill steps; ${(chunked.ms / 1000).toFixed(2)} s in all; same tokens` });
      rows.push({ what: 'longest wait whole / chunked', value: `${(whole.worst / chunked.worst).toFixed(2)}x`, note: `wall time chunked / whole ${(chunked.ms / whole.ms).toFixed(2)}x` });
    } finally {
      model.close();
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
  console.table(rows);
  return rows;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await bench();
