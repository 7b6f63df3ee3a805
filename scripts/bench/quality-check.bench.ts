/**
 * The INT4-vs-BF16 quality check with its INT4 responses generated one prompt at a time against QUALITY_GENERATE_BATCH
 * together, on a two-layer OLMoE-shaped random model (CPU backend): 16 prompts of 60-200 tokens, 128-token responses
 * (the check's default). First the generation alone (INT4, alternated, two rounds each), then the whole check, the
 * Q4_0 pass included as the app runs it (alternated, once each): what share of the check generation is, and what
 * batching it saves. Prints times and ratios; asserts nothing.
 * Run alone with `npx tsx scripts/bench/quality-check.bench.ts`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

import type { QualityReport } from '../../electron/common/ipc-contract.js';
import { quantile } from '../../electron/common/perf-stats.js';
import { loadModel } from '../../electron/worker/runtime/binding.js';
import { packModel } from '../../electron/worker/runtime/pack.js';
import { QUALITY_GENERATE_BATCH, runQualityCheck } from '../../electron/worker/runtime/quality-check.js';
import { Prng } from '../lib/prng.js';
import { makeTinyModel } from '../make-tiny-model.js';

const PROMPTS = 16;
const MAX_NEW = 128;
const GENERATE_ROUNDS = 2;

const median = (v: readonly number[]) => quantile([...v].sort((a, b) => a - b), 0.5);

export async function bench(): Promise<unknown> {
  const root = mkdtempSync(join(tmpdir(), 'horizon-bench-quality-check-'));
  try {
    const src = await makeTinyModel(join(root, 'src'), { full: true, layers: 2, seed: 4 });
    await packModel({ src: src.dir, dst: join(root, 'int4'), threads: 2 });
    const rng = new Prng(23);
    const prompts = Array.from({ length: PROMPTS }, (_, key) => ({
      key,
      tokenIds: Array.from({ length: 60 + (rng.nextU32() % 141) }, () => 3 + (rng.nextU32() % (src.tokenizerSize - 3))),
    }));
    const batches = [1, QUALITY_GENERATE_BATCH];
    const int4 = await loadModel({ dir: join(root, 'int4'), weights: 'int4', backend: 'cpu', threads: 2 });
    const generating = new Map<number, number[]>(batches.map((b) => [b, []]));
    try {
      for (let round = 0; round < GENERATE_ROUNDS; round++) {
        for (const b of batches) {
          const t0 = performance.now();
          for (let i = 0; i < PROMPTS; i += b) await int4.generate({ prompts: prompts.slice(i, i + b).map((p) => p.tokenIds), maxNewTokens: MAX_NEW, stopTokens: [] });
          generating.get(b)!.push((performance.now() - t0) / 1000);
        }
      }
    } finally {
      int4.close();
    }
    const g1 = median(generating.get(1)!);
    const gb = median(generating.get(QUALITY_GENERATE_BATCH)!);
    console.log(
      `INT4 generation alone, ${PROMPTS} prompts x ${MAX_NEW} tokens: one at a time ${g1.toFixed(1)} s, ${QUALITY_GENERATE_BATCH} together ${gb.toFixed(1)} s ` +
        `(median of ${GENERATE_ROUNDS}): ${(g1 / gb).toFixed(2)}x`,
    );
    const check = (generateBatch: number) =>
      runQualityCheck({
        reference: { dir: src.dir, weights: 'bf16', backend: 'cpu' },
        candidate: { dir: join(root, 'int4'), weights: 'int4', backend: 'cpu' },
        prompts,
        maxNewTokens: MAX_NEW,
        stopTokens: [],
        threads: 2,
        q4_0: true,
        generateBatch,
      });
    const whole = new Map<number, number>();
    const reports = new Map<number, QualityReport>();
    for (const b of batches) {
      const t0 = performance.now();
      reports.set(b, await check(b));
      whole.set(b, (performance.now() - t0) / 1000);
    }
    const [one, many] = [reports.get(1)!, reports.get(QUALITY_GENERATE_BATCH)!];
    const same = JSON.stringify(one.perPrompt.map((p) => p.responseTokens)) === JSON.stringify(many.perPrompt.map((p) => p.responseTokens));
    const [w1, wb] = [whole.get(1)!, whole.get(QUALITY_GENERATE_BATCH)!];
    console.log(
      `the whole check, Q4_0 pass included: one at a time ${w1.toFixed(1)} s, ${QUALITY_GENERATE_BATCH} together ${wb.toFixed(1)} s: ${(w1 / wb).toFixed(2)}x ` +
        `(generation ${((100 * g1) / w1).toFixed(0)}% of it one at a time); ${one.positions} positions either way` +
        `${same ? '' : ' (the responses differ in length!)'}, mean KL ${one.meanKl.toExponential(3)} / ${many.meanKl.toExponential(3)}`,
    );
    return { generating: Object.fromEntries(generating), whole: Object.fromEntries(whole), positions: one.positions };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  await bench();
}
