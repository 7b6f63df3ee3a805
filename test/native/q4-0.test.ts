/**
 * The quality check's point of comparison, llama.cpp's Q4_0 weights with Q8_0 activations: the TS reference rounds
 * both as gguf-py (llama.cpp's own Python quantiser) does, bit for bit; the runtime's Q4_0-rounded BF16 experts give
 * the logits of the TS forward pass over the reference's round trips; and the rounding is refused where it does not
 * apply.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { loadModel } from '../../electron/worker/runtime/binding.js';
import type { ExpertRounding, WeightsKind } from '../../electron/worker/runtime/binding.js';
import { packModel } from '../../electron/worker/runtime/pack.js';
import { fillNormal, Prng } from '../../scripts/lib/prng.js';
import { makeTinyModel } from '../../scripts/make-tiny-model.js';
import type { TinyModel } from '../../scripts/make-tiny-model.js';
import { writeExpertVariant } from '../reference/expert-variant.js';
import { olmoeForward, weightSource } from '../reference/olmoe-forward.js';
import type { ForwardConfig } from '../reference/olmoe-forward.js';
import { q4_0RoundTrip, q8_0RoundTrip } from '../reference/q4-0.js';
import { readCheckpoint } from '../reference/safetensors.js';

const REPO = resolve(import.meta.dirname, '..', '..');
const GGUF_PY = resolve(REPO, '..', 'shared', 'peers', 'llama.cpp', 'gguf-py');
const PYTHON = process.env.HORIZON_PYTHON ?? 'python3';
// ../shared/peers is there for benchmarks and may be missing: then the comparison is skipped (and says so). Where
// it is there, CI must run it (python3-numpy is installed by .ci/run).
const HAS_PEERS = existsSync(GGUF_PY);
const HAS_GGUF_PY = HAS_PEERS && spawnSync(PYTHON, ['-c', 'import numpy, gguf.quants'], { stdio: 'ignore', env: { ...process.env, PYTHONPATH: GGUF_PY } }).status === 0;
if (HAS_PEERS && !HAS_GGUF_PY && process.env.CI) throw new Error(`${PYTHON} cannot import numpy and gguf-py from ${GGUF_PY}; CI must provide numpy`);

/** Blocks that reach each branch of the quantiser, then Gaussian and heavy-tailed ones. */
function sample(): Float32Array {
  const blocks: number[][] = [
    Array.from({ length: 32 }, (_, j) => j),
    [-4, 1, 2, 3, 3.9, -1.2],
    [2, -2],
    [-2, 2],
    [1.0001, 0.56253],
    [],
    [1e-30, -3e-31], // subnormal FP16 scale: d rounds to zero
    [65504 * 8, 1], // the largest finite FP16 scale
  ];
  const values = new Float32Array(32 * (blocks.length + 256));
  blocks.forEach((b, i) => values.set(b, 32 * i));
  const gauss = new Float32Array(32 * 256);
  fillNormal(new Prng(21), gauss, 0.02);
  for (let i = 0; i < gauss.length; i += 97) gauss[i] = gauss[i]! * 40; // outliers, as trained experts have
  values.set(gauss, 32 * blocks.length);
  return values;
}

describe('Q4_0 reference', () => {
  it.skipIf(!HAS_GGUF_PY)("rounds as gguf-py's Q4_0 quantiser and dequantiser do, bit for bit", () => {
    const dir = mkdtempSync(join(tmpdir(), 'horizon-q4-0-'));
    try {
      const x = sample();
      writeFileSync(join(dir, 'x.f32'), x);
      for (const [type, roundTrip] of [['Q4_0', q4_0RoundTrip], ['Q8_0', q8_0RoundTrip]] as const) {
        const script =
          'import sys, numpy as np\n' +
          'from gguf.quants import quantize, dequantize\n' +
          'from gguf.constants import GGMLQuantizationType as T\n' +
          'x = np.fromfile(sys.argv[1], dtype=np.float32).reshape(-1, 32)\n' +
          'with np.errstate(all="ignore"):\n' +
          `    y = dequantize(quantize(x, T.${type}), T.${type})\n` +
          'np.asarray(y, dtype=np.float32).tofile(sys.argv[2])\n';
        execFileSync(PYTHON, ['-c', script, join(dir, 'x.f32'), join(dir, 'y.f32')], { env: { ...process.env, PYTHONPATH: GGUF_PY }, stdio: 'pipe' });
        const theirs = new Uint32Array(new Float32Array(readFileSync(join(dir, 'y.f32')).buffer.slice(0)).buffer);
        const ours = new Uint32Array(roundTrip(x).buffer);
        expect(theirs.length, type).toBe(ours.length);
        const differing = ours.reduce((n, v, i) => n + (v === theirs[i] ? 0 : 1), 0);
        expect(differing, type).toBe(0);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('rounds hand-worked blocks as ggml does', () => {
    const x = new Float32Array(64);
    x.set([-4, 1, 2, 3, 3.9, -1.2]);
    x.set([1.0001, 0.56253], 32);
    const y = q4_0RoundTrip(x);
    expect(Array.from(y.subarray(0, 6))).toEqual([-4, 1, 2, 3, 3.5, -1]);
    expect(Array.from(y.subarray(32, 34))).toEqual([1, 0.5]);
    expect(() => q4_0RoundTrip(new Float32Array(31))).toThrow(/whole blocks of 32/);
  });

  it('rounds 8-bit activations as ggml does: ties away from zero, the scale through FP16', () => {
    const x = new Float32Array(64);
    x.set([127, 2.5, -2.5, 0.4999, -63.5, -0.3]);
    x.set([1, -0.5], 32);
    const y = q8_0RoundTrip(x);
    expect(Array.from(y.subarray(0, 6))).toEqual([127, 3, -3, 0, -64, 0]);
    expect(Object.is(y[5], 0)).toBe(true); // the stored int8 0, not -0
    const d = 1032 / 131072; // FP16 of 1 / 127
    expect(Array.from(y.subarray(32, 34))).toEqual([127 * d, -64 * d]);
    expect(() => q8_0RoundTrip(new Float32Array(33))).toThrow(/whole blocks of 32/);
  });
});

/**
 * Max |runtime - reference| over all logits, as a fraction of the reference's largest |logit| (parity-logits' BF16
 * bound). Both sides round the same values, so float summation order is all that differs (7e-7 here), unless it
 * tips an activation across a Q8_0 step.
 */
const MAX_REL_LOGIT_ERR = 1e-3;

function maxRelErr(got: readonly Float32Array[], want: readonly Float32Array[]): number {
  expect(got).toHaveLength(want.length);
  let err = 0;
  let scale = 0;
  want.forEach((row, t) =>
    row.forEach((v, i) => {
      scale = Math.max(scale, Math.abs(v));
      err = Math.max(err, Math.abs(got[t]![i]! - v));
    }),
  );
  return err / scale;
}

function argmax(row: Float32Array): number {
  return row.indexOf(Math.max(...row));
}

describe('the runtime with Q4_0-rounded experts', () => {
  let root: string;
  let model: TinyModel;
  const tokens = [5, 17, 42, 9, 60, 11, 2, 33, 48, 7, 101, 3];

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'horizon-q4-0-model-'));
    model = await makeTinyModel(join(root, 'tiny'), { seed: 12, tailDf: 4 });
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  async function logits(dir: string, weights: WeightsKind, expertRounding?: ExpertRounding): Promise<Float32Array[]> {
    const m = await loadModel({ dir, weights, backend: 'cpu', threads: 2 });
    try {
      return await m.logits(tokens, expertRounding ? { expertRounding } : undefined);
    } finally {
      m.close();
    }
  }

  const bits = (rows: readonly Float32Array[]) => rows.map((r) => Array.from(new Uint32Array(r.buffer, r.byteOffset, r.length)));

  it("gives the TS forward pass's logits over Q4_0 weights and Q8_0 expert inputs", async () => {
    const variant = join(root, 'q4_0-f32');
    writeExpertVariant(model.dir, variant, (w) => q4_0RoundTrip(w));
    const config = JSON.parse(readFileSync(join(model.dir, 'config.json'), 'utf8')) as ForwardConfig;
    const weights = weightSource(readCheckpoint(variant).tensors);
    const [rounded, plain] = [await logits(model.dir, 'bf16', 'q4_0'), await logits(model.dir, 'bf16')];
    // The CPU backend's KV caches hold FP16, as the reference's option rounds them.
    const withQ8 = olmoeForward(config, weights, tokens, { expertInputs: q8_0RoundTrip, fp16KvCache: true }).logits;
    const floatInputs = olmoeForward(config, weights, tokens, { fp16KvCache: true }).logits;
    const q8Err = maxRelErr(rounded, withQ8);
    const floatErr = maxRelErr(rounded, floatInputs);
    console.log(`q4_0 runtime vs reference: ${q8Err.toExponential(3)} with Q8_0 inputs, ${floatErr.toExponential(3)} with float inputs`);
    expect(q8Err).toBeLessThanOrEqual(MAX_REL_LOGIT_ERR);
    // The inputs' rounding is there: against float inputs the runtime is well outside the bound.
    expect(floatErr).toBeGreaterThan(2 * MAX_REL_LOGIT_ERR);
    rounded.forEach((row, t) => expect(argmax(row), `token ${t}`).toBe(argmax(withQ8[t]!)));
    // And the weights' rounding: the source's own logits differ.
    expect(rounded.some((row, t) => row.some((v, i) => v !== plain[t]![i]))).toBe(true);
  });

  it('rounds for the one call that asks: the same model gives its plain logits before and after', async () => {
    const m = await loadModel({ dir: model.dir, weights: 'bf16', backend: 'cpu', threads: 2 });
    try {
      const before = await m.logits(tokens);
      const rounded = await m.logits(tokens, { expertRounding: 'q4_0' });
      const after = await m.logits(tokens, { expertRounding: 'none' });
      expect(bits(after)).toEqual(bits(before));
      expect(bits(rounded)).not.toEqual(bits(before));
      expect(bits(rounded)).toEqual(bits(await logits(model.dir, 'bf16', 'q4_0')));
      // As the check asks for it: the response's rows alone.
      expect(bits(await m.logits(tokens, { expertRounding: 'q4_0', from: 3 }))).toEqual(bits(rounded.slice(3)));
      // Generation never rounds: it follows the plain logits' greedy choice.
      const next = (await m.generate({ prompts: [tokens], maxNewTokens: 1, stopTokens: [] })).results[0]!.tokens[0];
      const last = before.at(-1)!;
      expect(next).toBe(last.indexOf(Math.max(...last)));
    } finally {
      m.close();
    }
  });

  it('refuses the rounding for an INT4 folder and for an unknown scheme, and the model still answers', async () => {
    const int4 = join(root, 'int4-g32');
    await packModel({ src: model.dir, dst: int4, threads: 1 });
    const m = await loadModel({ dir: int4, weights: 'int4', backend: 'cpu', threads: 2 });
    try {
      await expect(m.logits(tokens, { expertRounding: 'q4_0' })).rejects.toThrow(
        /logits: expert rounding 'q4_0' needs a source checkpoint \(weights 'bf16'\) on the CPU backend/,
      );
      await expect(m.logits(tokens, { expertRounding: 'q8_0' as ExpertRounding })).rejects.toThrow(/unknown expertRounding 'q8_0'/);
      expect(await m.logits(tokens)).toHaveLength(tokens.length);
    } finally {
      m.close();
    }
  });
});
