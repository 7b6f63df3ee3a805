/**
 * The INT4-vs-BF16 quality check: its metrics on hand-made logits, then on the generated tiny OLMoE through the native
 * runtime (identical weights agree everywhere; INT4 against BF16 gives figures in range), and `horizon quality`.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { makeTinyModel } from '../../scripts/make-tiny-model.js';
import type { TinyModel } from '../../scripts/make-tiny-model.js';
import { packModel } from '../../electron/worker/runtime/pack.js';
import { compareTeacherForced, klDivergence, quantileNearestRank, runQualityCheck } from '../../electron/worker/runtime/quality-check.js';

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

  it('takes nearest-rank quantiles', () => {
    expect(quantileNearestRank([5, 1, 4, 2, 3], 0.5)).toBe(3);
    expect(quantileNearestRank(Array.from({ length: 100 }, (_, i) => i + 1), 0.99)).toBe(99);
    expect(quantileNearestRank([], 0.99)).toBe(0);
  });

  it('reads the rows that predict the response tokens, and finds where the reference first diverges', () => {
    const row = (best: number) => Float32Array.from([0, 1, 2, 3], (_, i) => (i === best ? 5 : 0));
    // Prompt of 2 tokens, response [1, 2, 3]: rows 1, 2, 3 predict them; row 0 is never read.
    const reference = [row(0), row(1), row(3), row(3)];
    const candidate = [row(2), row(1), row(2), row(3)];
    const sink = { kls: [] as number[], absDiffSum: 0, absDiffCount: 0, agree: 0 };
    const r = compareTeacherForced(7, 2, [1, 2, 3], reference, candidate, sink);
    expect(r).toMatchObject({ key: 7, promptTokens: 2, responseTokens: 3, firstDivergence: 1 });
    expect(r.top1Agreement).toBeCloseTo(2 / 3, 12);
    expect(sink.kls).toHaveLength(3);
    expect(sink.kls[0]).toBe(0);
    expect(sink.kls[1]).toBeGreaterThan(0);
    expect(sink.absDiffSum).toBe(10); // row 2 differs by 5 in two places
    expect(sink.absDiffCount).toBe(12);
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

  it('horizon quality stores the report beside the model and prints it as JSON', () => {
    const out = execFileSync(process.execPath, [CLI, 'quality', '--model', model.dir, '--limit', '2', '--max-new-tokens', '4', '--input', IFEVAL, '--json'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const j = JSON.parse(out) as Record<string, unknown>;
    expect(Object.keys(j)).toEqual(expect.arrayContaining(['top1Agreement', 'meanKl', 'p99Kl', 'positions']));
    expect(j).toMatchObject({ format: 'horizon-quality-v1', int4Dir: 'int4-g32', prompts: 2, limit: 2, maxNewTokens: 4, backend: 'cpu' });
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
