/**
 * Independent check: scripts/independent-check.py (NumPy, no shared code) writes its own OLMoE checkpoint and computes
 * logits from modeling_olmoe.py; the TS reference and the native runtime must agree with it. Runs where python3 with
 * numpy is installed (Debian: python3 python3-numpy); native cases also need `horizon logits`/`pack`.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { makeTinyModel } from '../../scripts/make-tiny-model.js';
import { INT4_FIXTURE_DIR } from '../reference/make-int4-fixtures.js';
import { referenceLogits } from '../reference/olmoe-forward.js';
import { packTensorsReference } from '../reference/qpacked.js';
import { readCheckpoint } from '../reference/safetensors.js';

/** TS reference vs NumPy, both FP32: only summation order differs (measured ~4e-7 of the logit scale). */
const MAX_REL_LOGIT_ERR_REFERENCE = 1e-5;
/** Native vs NumPy, as parity-logits.test.ts allows native vs the TS reference. */
const MAX_REL_LOGIT_ERR_NATIVE_BF16 = 1e-3;
const MAX_REL_LOGIT_ERR_NATIVE_INT4 = 5e-3;

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const SCRIPT = join(REPO, 'scripts', 'independent-check.py');
/** HORIZON_PYTHON picks the interpreter (CI installs Debian's python3-numpy when the default python3 lacks numpy). */
const PYTHON = process.env.HORIZON_PYTHON ?? 'python3';
const HAS_NUMPY = spawnSync(PYTHON, ['-c', 'import numpy'], { stdio: 'ignore' }).status === 0;
// CI must run this check, never skip it.
if (!HAS_NUMPY && process.env.CI) throw new Error(`${PYTHON} has no numpy; CI must provide it (apt-get install python3-numpy)`);

const TOKENS = [256, 72, 101, 108, 108, 111, 44, 32, 119, 111, 114, 108, 100, 33, 257, 3, 270];

type LogitsFile = { tokens: number[]; logits: number[][] };

function python(args: string[]): string {
  return execFileSync(PYTHON, [SCRIPT, ...args], { cwd: REPO, encoding: 'utf8', timeout: 120_000 });
}

function numpyLogits(modelDir: string, tokens: number[], out: string): number[][] {
  python(['logits', '--model', modelDir, '--tokens', tokens.join(','), '--out', out]);
  const parsed = JSON.parse(readFileSync(out, 'utf8')) as LogitsFile;
  expect(parsed.tokens).toEqual(tokens);
  return parsed.logits;
}

function nativeLogits(modelDir: string, tokens: number[], weights: 'bf16' | 'int4', out: string): number[][] {
  execFileSync(process.execPath, [join(REPO, 'scripts', 'horizon.mjs'), 'logits', '--model', modelDir, '--tokens', tokens.join(','), '--weights', weights, '--out', out], { cwd: REPO, stdio: 'pipe', timeout: 120_000 });
  return (JSON.parse(readFileSync(out, 'utf8')) as LogitsFile).logits;
}

/** Max |got - want| over all logits as a fraction of want's largest |logit|, and top-1 mismatching positions. */
function relErr(got: ArrayLike<number>[], want: ArrayLike<number>[]): { rel: number; top1: number[] } {
  expect(got).toHaveLength(want.length);
  let maxAbs = 0;
  let scale = 0;
  const top1: number[] = [];
  const argmax = (r: ArrayLike<number>) => Array.prototype.indexOf.call(r, Math.max(...Array.from(r))) as number;
  want.forEach((row, t) => {
    expect(got[t]!.length).toBe(row.length);
    for (let i = 0; i < row.length; i++) {
      scale = Math.max(scale, Math.abs(row[i]!));
      maxAbs = Math.max(maxAbs, Math.abs(got[t]![i]! - row[i]!));
    }
    if (argmax(got[t]!) !== argmax(row)) top1.push(t);
  });
  return { rel: maxAbs / scale, top1 };
}

let root: string;
let indep: string;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'parity-independent-'));
  indep = join(root, 'numpy-model');
  if (HAS_NUMPY) python(['write', '--out', indep, '--seed', '5']);
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe.skipIf(!HAS_NUMPY)('independent NumPy implementation (runs only where python3 + numpy exist)', () => {
  it('re-derives the golden INT4 fixture bytes with its own packer', () => {
    expect(python(['int4', '--fixtures', INT4_FIXTURE_DIR])).not.toMatch(/DIFFERS/);
  });

  it('agrees with the TS reference on the NumPy-written checkpoint (GQA 3:1, top-3 renormalised, 3 shards)', () => {
    const want = numpyLogits(indep, TOKENS, join(root, 'np-indep.json'));
    const got = referenceLogits(indep, TOKENS, 'bf16').logits;
    const e = relErr(got, want);
    console.log(`independent: TS reference vs NumPy on the NumPy checkpoint, rel err ${e.rel.toExponential(3)}`);
    expect(e.rel).toBeLessThanOrEqual(MAX_REL_LOGIT_ERR_REFERENCE);
    expect(e.top1).toEqual([]);
  });

  it('agrees with the TS reference on a TS-generated tiny model', async () => {
    const model = await makeTinyModel(join(root, 'tiny'), { seed: 31 });
    const tokens = [320, 84, 104, 101, 32, 113, 117, 105, 99, 107, 256, 257, 10, 300, model.tokenizerSize + 2];
    const e = relErr(referenceLogits(model.dir, tokens, 'bf16').logits, numpyLogits(model.dir, tokens, join(root, 'np-tiny.json')));
    expect(e.rel).toBeLessThanOrEqual(MAX_REL_LOGIT_ERR_REFERENCE);
    expect(e.top1).toEqual([]);
  });

  it('agrees with native `horizon logits` (bf16) on the NumPy checkpoint', () => {
    const want = numpyLogits(indep, TOKENS, join(root, 'np-indep-2.json'));
    const e = relErr(nativeLogits(indep, TOKENS, 'bf16', join(root, 'native-indep.json')), want);
    console.log(`independent: native bf16 vs NumPy, rel err ${e.rel.toExponential(3)}`);
    expect(e.rel).toBeLessThanOrEqual(MAX_REL_LOGIT_ERR_NATIVE_BF16);
    expect(e.top1).toEqual([]);
  });

  it('agrees with native pack + int4 logits on the NumPy checkpoint (NumPy dequantises)', () => {
    const packed = join(root, 'numpy-model-packed');
    execFileSync(process.execPath, [join(REPO, 'scripts', 'horizon.mjs'), 'pack', '--model', indep, '--out', packed], { cwd: REPO, stdio: 'pipe', timeout: 120_000 });
    const ref = packTensorsReference(readCheckpoint(indep).tensors);
    expect(ref.groupSize).toBe(8);
    const native = readCheckpoint(packed).tensors;
    const differing = [...ref.tensors].filter(([n, t]) => !Buffer.from(t.bytes).equals(Buffer.from(native.get(n)?.bytes ?? []))).map(([n]) => n);
    expect(differing).toEqual([]);
    const want = numpyLogits(packed, TOKENS, join(root, 'np-packed.json'));
    const e = relErr(nativeLogits(packed, TOKENS, 'int4', join(root, 'native-packed.json')), want);
    console.log(`independent: native int4 vs NumPy on the packed NumPy checkpoint, rel err ${e.rel.toExponential(3)}`);
    expect(e.rel).toBeLessThanOrEqual(MAX_REL_LOGIT_ERR_NATIVE_INT4);
    expect(e.top1).toEqual([]);
  });
});
