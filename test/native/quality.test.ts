/**
 * The INT4-vs-BF16 quality check: its metrics on hand-made logits, then on the generated tiny OLMoE through the native
 * runtime (identical weights agree everywhere; INT4 against BF16 gives figures in range), and `horizon quality`.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { Prng } from '../../scripts/lib/prng.js';
import { makeTinyModel } from '../../scripts/make-tiny-model.js';
import type { TinyModel } from '../../scripts/make-tiny-model.js';
import { packModel } from '../../electron/worker/runtime/pack.js';
import { pairedRatioInterval } from '../../electron/common/paired-stats.js';
import { loadModel } from '../../electron/worker/runtime/binding.js';
import { closerCounts, compareTeacherForced, klDivergence, QUALITY_GENERATE_BATCH, quantileNearestRank, runQualityCheck } from '../../electron/worker/runtime/quality-check.js';

const REPO = resolve(import.meta.dirname, '..', '..');
const CLI = join(REPO, 'scripts', 'horizon.mjs');
const IFEVAL = resolve(REPO, '..', 'shared', 'ifeval', 'input_data.jsonl');

describe('quality metrics', () => {
  it('computes KL(P || Q) in nats', () => {
    const p = Float32Array.from([0, 0]);
    const q = Float32Array.from([Math.log(3), 0]); // Q = (3/4, 1/4)
    // P = (1/2, 1/2): 1/2 ln(2/3) + 1/2 ln(2) = 1/2 ln(4/3)
    expect(klDivergence(p, q)).toBeCloseTo(0.5 * Math.log(4 / 3), 7); // ln 3 as float32
    expect(klDivergence(q, q)).toBe(0);
  });

  it('agrees with KL from two log-softmaxes on wide rows, shifted and far apart', () => {
    const rng = new Prng(9);
    const row = (scale: number, shift: number) => Float32Array.from({ length: 50_304 }, () => shift + scale * ((rng.nextU32() / 2 ** 32) * 2 - 1));
    const logSoftmax = (r: Float32Array) => {
      const max = r.reduce((a, v) => Math.max(a, v), -Infinity);
      const lse = max + Math.log(r.reduce((a, v) => a + Math.exp(v - max), 0));
      return Array.from(r, (v) => v - lse);
    };
    const direct = (p: Float32Array, q: Float32Array) => {
      const [lp, lq] = [logSoftmax(p), logSoftmax(q)];
      return lp.reduce((a, v, i) => a + Math.exp(v) * (v - lq[i]!), 0);
    };
    const p = row(12, 30);
    const near = Float32Array.from(p, (v) => v + 0.01 * ((rng.nextU32() / 2 ** 32) * 2 - 1));
    for (const q of [near, row(12, -40), row(3, 0)]) {
      const want = direct(p, q);
      expect(want).toBeGreaterThan(0);
      expect(Math.abs(klDivergence(p, q) - want)).toBeLessThan(1e-9 * want + 1e-13);
    }
  });

  it('takes nearest-rank quantiles', () => {
    expect(quantileNearestRank([5, 1, 4, 2, 3], 0.5)).toBe(3);
    expect(quantileNearestRank(Array.from({ length: 100 }, (_, i) => i + 1), 0.99)).toBe(99);
    expect(quantileNearestRank([], 0.99)).toBe(0);
  });

  it('reads the rows that predict the response tokens, and finds where the reference first diverges', () => {
    const row = (best: number) => Float32Array.from([0, 1, 2, 3], (_, i) => (i === best ? 5 : 0));
    // Prompt of 2 tokens, response [1, 2, 3]: the logits from position 1 on predict them.
    const reference = [row(1), row(3), row(3)];
    const candidate = [row(1), row(2), row(3)];
    const sink = { kls: [] as number[], absDiffSum: 0, absDiffCount: 0, agree: 0 };
    const [r] = compareTeacherForced(7, 2, [1, 2, 3], reference, [candidate], [sink]);
    expect(r).toMatchObject({ key: 7, promptTokens: 2, responseTokens: 3, firstDivergence: 1 });
    expect(r!.top1Agreement).toBeCloseTo(2 / 3, 12);
    expect(sink.kls).toHaveLength(3);
    expect(sink.kls[0]).toBe(0);
    expect(sink.kls[1]).toBeGreaterThan(0);
    expect(sink.absDiffSum).toBe(10); // row 2 differs by 5 in two places
    expect(sink.absDiffCount).toBe(12);
  });

  it('compares several candidates against one reference as it compares each alone', () => {
    const rng = new Prng(4);
    const rows = (n: number) => Array.from({ length: n }, () => Float32Array.from({ length: 64 }, () => (rng.nextU32() % 1000) / 100));
    const reference = rows(6);
    const candidates = [rows(6), rows(6), reference];
    const response = [3, 9, 1, 0];
    const sink = () => ({ kls: [] as number[], absDiffSum: 0, absDiffCount: 0, agree: 0 });
    const together = candidates.map(sink);
    const both = compareTeacherForced(1, 2, response, reference, candidates, together);
    candidates.forEach((c, k) => {
      const alone = sink();
      expect(compareTeacherForced(1, 2, response, reference, [c], [alone])).toEqual([both[k]]);
      expect(alone).toEqual(together[k]);
    });
    // The reference against itself: every position agrees, KL 0.
    expect(both[2]).toMatchObject({ top1Agreement: 1, meanKl: 0 });
    expect(together[2]!.absDiffSum).toBe(0);
    expect(() => compareTeacherForced(1, 2, response, reference, candidates, [sink()])).toThrow(/3 candidates, 1 sinks/);
  });
});

describe('closerCounts', () => {
  const prompt = (meanKl: number, q4_0MeanKl: number | undefined, responseTokens = 4) => ({
    key: 1, promptTokens: 3, responseTokens, top1Agreement: 1, meanKl, firstDivergence: null, ...(q4_0MeanKl === undefined ? {} : { q4_0MeanKl }),
  });

  it('counts the prompts each side is closer on, leaves ties and empty responses out, and sign-tests them', () => {
    const r = closerCounts([prompt(0.1, 0.2), prompt(0.1, 0.3), prompt(0.05, 0.06), prompt(0.2, 0.2), prompt(0, 0, 0), prompt(0.1, undefined)]);
    // Three against none: p = 2 * (1/2)^3.
    expect(r).toMatchObject({ promptsInt4Closer: 3, promptsQ4_0Closer: 0 });
    expect(r.signTestP).toBeCloseTo(0.25, 12);
    expect(closerCounts([prompt(0.3, 0.2)])).toEqual({ promptsInt4Closer: 0, promptsQ4_0Closer: 1, signTestP: 1 });
  });
});

describe('quality check on the tiny model', () => {
  let root: string;
  let model: TinyModel;
  let int4Dir: string;
  const prompts = [
    { key: 1, tokenIds: [5, 17, 42, 9] },
    { key: 2, tokenIds: [60, 11, 2, 33, 48, 7] },
  ];

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'horizon-quality-'));
    model = await makeTinyModel(join(root, 'tiny'), { seed: 3 });
    int4Dir = join(model.dir, 'int4-g32');
    await packModel({ src: model.dir, dst: int4Dir, threads: 1 });
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('finds identical weights identical: agreement 1, KL 0, no divergence', async () => {
    const spec = { dir: model.dir, weights: 'bf16', backend: 'cpu' } as const;
    const r = await runQualityCheck({ reference: spec, candidate: spec, prompts, maxNewTokens: 6, stopTokens: [] });
    expect(r).toMatchObject({ prompts: 2, positions: 12, top1Agreement: 1, meanKl: 0, p99Kl: 0, meanAbsLogitDiff: 0, promptsWithoutDivergence: 2, medianFirstDivergence: null });
  });

  it('measures INT4 against BF16 over the INT4 responses, with progress', async () => {
    const progress: number[] = [];
    const r = await runQualityCheck({
      reference: { dir: model.dir, weights: 'bf16', backend: 'cpu' },
      candidate: { dir: int4Dir, weights: 'int4', backend: 'cpu' },
      prompts,
      maxNewTokens: 8,
      stopTokens: [],
      onProgress: (p) => progress.push(p.done),
    });
    expect(progress).toEqual([0, 1, 2]);
    expect(r.positions).toBe(16);
    expect(r.top1Agreement).toBeGreaterThanOrEqual(0);
    expect(r.top1Agreement).toBeLessThanOrEqual(1);
    expect(r.meanKl).toBeGreaterThan(0);
    expect(r.p99Kl).toBeGreaterThan(0);
    expect(r.meanAbsLogitDiff).toBeGreaterThan(0);
    expect(r.perPrompt.map((p) => p.responseTokens)).toEqual([8, 8]);
  });

  it('generates the responses in batches of QUALITY_GENERATE_BATCH and compares each prompt in order, stop tokens included', async () => {
    const many = Array.from({ length: QUALITY_GENERATE_BATCH + 3 }, (_, i) => ({ key: 100 + i, tokenIds: [3 + i, 40 - i, 7, 11 + 2 * i] }));
    const spec = { dir: int4Dir, weights: 'int4', backend: 'cpu' } as const;
    // Each response as INT4 generates it alone, and a stop token that ends some of them early.
    const m = await loadModel({ ...spec, threads: 2 });
    let alone: number[][];
    try {
      alone = [];
      for (const p of many) alone.push([...(await m.generate({ prompts: [p.tokenIds], maxNewTokens: 5, stopTokens: [] })).results[0]!.tokens]);
    } finally {
      m.close();
    }
    const stop = alone[1]![2]!;
    const progress: number[] = [];
    const r = await runQualityCheck({ reference: { ...spec, dir: model.dir, weights: 'bf16' }, candidate: spec, prompts: many, maxNewTokens: 5, stopTokens: [stop], onProgress: (p) => progress.push(p.done) });
    expect(progress).toEqual(Array.from({ length: many.length + 1 }, (_, i) => i));
    expect(r.perPrompt.map((p) => p.key)).toEqual(many.map((p) => p.key));
    const expected = alone.map((t) => (t.includes(stop) ? t.indexOf(stop) + 1 : t.length));
    expect(expected.some((n) => n < 5)).toBe(true);
    expect(r.perPrompt.map((p) => p.responseTokens)).toEqual(expected);
    expect(r.perPrompt.map((p) => p.promptTokens)).toEqual(many.map((p) => p.tokenIds.length));
  });

  it("puts llama.cpp's Q4_0 on the same experts beside INT4, over the same positions", async () => {
    const reference = { dir: model.dir, weights: 'bf16', backend: 'cpu' } as const;
    const candidate = { dir: int4Dir, weights: 'int4', backend: 'cpu' } as const;
    const r = await runQualityCheck({ reference, candidate, prompts, maxNewTokens: 8, stopTokens: [], q4_0: true });
    expect(r.q4_0).not.toBeNull();
    expect(r.q4_0!.activations).toBe('q8_0');
    // The same figures recomputed from the two models' logits over the INT4 weights' own greedy responses (the
    // Q4_0-rounded logits are checked against the TS reference forward pass in q4-0.test.ts).
    const [bf16, int4] = await Promise.all([reference, candidate].map((s) => loadModel({ ...s, threads: 2 })));
    try {
      const sink = { kls: [] as number[], absDiffSum: 0, absDiffCount: 0, agree: 0 };
      const int4Sink = { kls: [] as number[], absDiffSum: 0, absDiffCount: 0, agree: 0 };
      const sums = { q4: [] as number[], int4: [] as number[] };
      for (const p of prompts) {
        const response = (await int4!.generate({ prompts: [p.tokenIds], maxNewTokens: 8, stopTokens: [] })).results[0]!.tokens;
        const tokens = [...p.tokenIds, ...response];
        // Every position's logits, cut here: the check asks for the response's rows alone (`from`), which must be these.
        const fromPrompt = (rows: Float32Array[]) => rows.slice(p.tokenIds.length - 1);
        const ref = fromPrompt(await bf16!.logits(tokens));
        const [q] = compareTeacherForced(p.key, p.tokenIds.length, response, ref, [fromPrompt(await bf16!.logits(tokens, { expertRounding: 'q4_0' }))], [sink]);
        const [i] = compareTeacherForced(p.key, p.tokenIds.length, response, ref, [fromPrompt(await int4!.logits(tokens))], [int4Sink]);
        sums.q4.push(q!.meanKl * q!.responseTokens);
        sums.int4.push(i!.meanKl * i!.responseTokens);
      }
      // INT4's mean KL over Q4_0's, its interval from resampling the two prompts in pairs.
      const total = (v: readonly number[]) => v.reduce((a, b) => a + b, 0);
      const ci = r.q4_0!.meanKlRatioCi95!;
      expect(ci).toEqual(pairedRatioInterval(sums.q4, sums.int4, total));
      const closer = sums.int4.filter((v, k) => v < sums.q4[k]!).length;
      expect(r.q4_0!.promptsInt4Closer).toBe(closer);
      expect(r.q4_0!.promptsQ4_0Closer).toBe(sums.int4.filter((v, k) => v > sums.q4[k]!).length);
      expect(r.perPrompt.map((p) => p.q4_0MeanKl! * p.responseTokens)).toEqual(sums.q4);
      const perPrompt = sums.int4.map((v, k) => v / sums.q4[k]!);
      expect(ci[0]).toBeGreaterThanOrEqual(Math.min(...perPrompt) - 1e-12);
      expect(ci[1]).toBeLessThanOrEqual(Math.max(...perPrompt) + 1e-12);
      expect(sink.kls).toHaveLength(r.positions);
      expect(r.q4_0!.meanKl).toBeGreaterThan(0);
      expect(r.q4_0!.meanKl).toBeCloseTo(sink.kls.reduce((a, b) => a + b, 0) / sink.kls.length, 12);
      expect(r.q4_0!.p99Kl).toBe(quantileNearestRank(sink.kls, 0.99));
      expect(r.q4_0!.top1Agreement).toBe(sink.agree / sink.kls.length);
      expect(r.q4_0!.meanAbsLogitDiff).toBeCloseTo(sink.absDiffSum / sink.absDiffCount, 12);
    } finally {
      for (const m of [bf16, int4]) m?.close();
    }
    // Refused where it cannot run, before any prompt; left out unless asked for.
    await expect(runQualityCheck({ reference: candidate, candidate, prompts, maxNewTokens: 2, stopTokens: [], q4_0: true })).rejects.toThrow(
      /the Q4_0 comparison needs a bf16 reference on the CPU backend/,
    );
    expect((await runQualityCheck({ reference, candidate, prompts, maxNewTokens: 2, stopTokens: [] })).q4_0).toBeNull();
  });

  it('horizon quality stores the report beside the model and prints it as JSON', () => {
    const out = execFileSync(process.execPath, [CLI, 'quality', '--model', model.dir, '--limit', '2', '--max-new-tokens', '4', '--input', IFEVAL, '--json'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const j = JSON.parse(out) as Record<string, unknown>;
    expect(Object.keys(j)).toEqual(expect.arrayContaining(['top1Agreement', 'meanKl', 'p99Kl', 'positions']));
    expect(j).toMatchObject({ format: 'horizon-quality-v1', int4Dir: 'int4-g32', prompts: 2, limit: 2, maxNewTokens: 4, backend: 'cpu' });
    // Tied to the pack it checked.
    expect(j.packManifestSha256).toBe(createHash('sha256').update(readFileSync(join(int4Dir, 'horizon-manifest.json'))).digest('hex'));
    expect(Object.keys(j.q4_0 as object).sort()).toEqual([
      'activations', 'meanAbsLogitDiff', 'meanKl', 'meanKlRatioCi95', 'p99Kl', 'promptsInt4Closer', 'promptsQ4_0Closer', 'signTestP', 'top1Agreement',
    ]);
    const file = join(model.dir, 'quality-int4-g32.json');
    expect(existsSync(file)).toBe(true);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual(j);
  });

  it('horizon quality --progress-json prints a JSON line per prompt, then done', () => {
    const out = execFileSync(process.execPath, [CLI, 'quality', '--model', model.dir, '--limit', '2', '--max-new-tokens', '2', '--input', IFEVAL, '--progress-json'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const lines = out.trim().split('\n').map((l) => JSON.parse(l) as { type: string; done?: number; total?: number; file?: string });
    expect(lines.map((l) => [l.type, l.done, l.total])).toEqual([['progress', 0, 2], ['progress', 1, 2], ['progress', 2, 2], ['done', undefined, undefined]]);
    expect(lines.at(-1)!.file).toBe(join(model.dir, 'quality-int4-g32.json'));
  });

  it("horizon quality prints the Q4_0 comparison in words, and --no-q4-0 leaves it out", () => {
    const run = (...extra: string[]) =>
      execFileSync(process.execPath, [CLI, 'quality', '--model', model.dir, '--limit', '1', '--max-new-tokens', '3', '--input', IFEVAL, ...extra], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
      });
    const text = run();
    expect(text).toMatch(/llama\.cpp's Q4_0 on the same experts \(8-bit inputs, as llama\.cpp runs it\), over the same positions:\n {2}top-1 agreement \d+\.\d\d%\n {2}KL\(BF16 \|\| Q4_0\) mean \d\.\d{3}e-?\d+ nats, p99 \S+; INT4's mean KL is \d+\.\d\dx Q4_0's\n/);
    const without = run('--no-q4-0', '--json');
    expect((JSON.parse(without) as { q4_0: unknown }).q4_0).toBeNull();
  });

  it('horizon quality refuses a folder without both weight sets', () => {
    let err = '';
    try {
      execFileSync(process.execPath, [CLI, 'quality', '--model', int4Dir, '--input', IFEVAL], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    } catch (e) {
      err = String((e as { stderr?: string }).stderr);
    }
    expect(err).toMatch(/horizon quality: .*int4-g32.*BF16/);
  });
});
