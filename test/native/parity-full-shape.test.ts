/**
 * Opt-in (HORIZON_PARITY_FULL=1; 6 min on a busy 2-core machine, ~2.5 GB temp disk): one full-width OLMoE-1B-7B layer (hidden 2048, 64 experts,
 * top-8, vocab 50304, group size 32) from make-tiny-model --full, native vs the TS reference in bf16 and int4.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { makeTinyModel } from '../../scripts/make-tiny-model.js';
import { olmoeForward, referenceLogits, weightSource } from '../reference/olmoe-forward.js';
import type { ForwardConfig } from '../reference/olmoe-forward.js';
import { packTensorsReference } from '../reference/qpacked.js';
import type { RawTensor } from '../reference/safetensors.js';
import { readCheckpoint } from '../reference/safetensors.js';

/** Same budgets as parity-logits.test.ts: fractions of the reference's largest |logit|. */
const MAX_ABS_LOGIT_ERR_BF16 = 1e-3;
const MAX_ABS_LOGIT_ERR_INT4 = 5e-3;
const RUN = process.env.HORIZON_PARITY_FULL === '1';
const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const TOKENS = [320, 84, 104, 101, 32, 113, 50000];

function nativeLogits(dir: string, weights: 'bf16' | 'int4', out: string): number[][] {
  execFileSync(process.execPath, [join(REPO, 'scripts', 'horizon.mjs'), 'logits', '--model', dir, '--tokens', TOKENS.join(','), '--weights', weights, '--out', out], { stdio: 'pipe', timeout: 300_000 });
  return (JSON.parse(readFileSync(out, 'utf8')) as { logits: number[][] }).logits;
}

function relErr(got: number[][], want: Float32Array[]): number {
  let maxAbs = 0;
  let scale = 0;
  want.forEach((row, t) => row.forEach((x, i) => {
    scale = Math.max(scale, Math.abs(x));
    maxAbs = Math.max(maxAbs, Math.abs(got[t]![i]! - x));
  }));
  return maxAbs / scale;
}

const argmax = (r: ArrayLike<number>) => Array.prototype.indexOf.call(r, Math.max(...Array.from(r))) as number;

let root: string;
beforeAll(async () => {
  if (!RUN) return;
  root = mkdtempSync(join(tmpdir(), 'parity-full-'));
  await makeTinyModel(join(root, 'src'), { full: true, layers: 1, seed: 2 });
}, 600_000);
afterAll(() => {
  if (root) rmSync(root, { recursive: true, force: true });
});

describe.skipIf(!RUN)('full-width single layer (opt-in: HORIZON_PARITY_FULL=1)', () => {
  it('bf16 logits agree with the reference', () => {
    const src = join(root, 'src');
    const want = referenceLogits(src, TOKENS, 'bf16').logits;
    const got = nativeLogits(src, 'bf16', join(root, 'bf16.json'));
    const rel = relErr(got, want);
    console.log(`parity full bf16: rel err ${rel.toExponential(3)}`);
    expect(rel).toBeLessThanOrEqual(MAX_ABS_LOGIT_ERR_BF16);
    want.forEach((row, t) => expect(argmax(got[t]!), `position ${t}`).toBe(argmax(row)));
  }, 600_000);

  it('packs with group size 32 to the reference bytes (sampled experts) and int4 logits agree', () => {
    const src = join(root, 'src');
    const packed = join(root, 'packed');
    execFileSync(process.execPath, [join(REPO, 'scripts', 'horizon.mjs'), 'pack', '--model', src, '--out', packed], { stdio: 'pipe', timeout: 600_000 });
    const source = readCheckpoint(src).tensors;
    const sample = new Map<string, RawTensor>(
      [...source].filter(([n]) => !n.includes('.experts.') || /\.experts\.(0|37|63)\./.test(n)),
    );
    const want = packTensorsReference(sample).tensors;
    const got = readCheckpoint(packed);
    for (const meta of got.metadata) expect(meta).toEqual({ format: 'qpacked-v2', group_size: '32', codebook: 'hq4nl' });
    const differing = [...want].filter(([n, t]) => !Buffer.from(t.bytes).equals(Buffer.from(got.tensors.get(n)?.bytes ?? []))).map(([n]) => n);
    expect(differing).toEqual([]);
    const config = JSON.parse(readFileSync(join(src, 'config.json'), 'utf8')) as ForwardConfig;
    const ref = olmoeForward(config, weightSource(got.tensors), TOKENS, { q8ExpertActivations: true, fp16KvCache: true }).logits;
    const logits = nativeLogits(packed, 'int4', join(root, 'int4.json'));
    const rel = relErr(logits, ref);
    console.log(`parity full int4: rel err ${rel.toExponential(3)}`);
    expect(rel).toBeLessThanOrEqual(MAX_ABS_LOGIT_ERR_INT4);
    ref.forEach((row, t) => expect(argmax(logits[t]!), `position ${t}`).toBe(argmax(row)));
  }, 900_000);
});
