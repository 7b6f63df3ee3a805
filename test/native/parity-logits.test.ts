/**
 * Native runtime vs the TS reference on a freshly generated tiny OLMoE: `horizon logits` (bf16 and int4) against
 * test/reference/olmoe-forward.ts, and `horizon pack` against the TS qpacked-v2 packer byte for byte.
 * Tolerances are fractions of the largest |logit| of the reference. To add a model variant, append to VARIANTS.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { Tokenizer } from '@huggingface/tokenizers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { makeTinyModel } from '../../scripts/make-tiny-model.js';
import type { TinyModel, TinyModelOptions } from '../../scripts/make-tiny-model.js';
import { olmoeForward, referenceLogits, weightSource } from '../reference/olmoe-forward.js';
import type { ForwardConfig } from '../reference/olmoe-forward.js';
import { packTensorsReference } from '../reference/qpacked.js';
import { readCheckpoint } from '../reference/safetensors.js';

/** Max |native - reference| over all logits, as a fraction of the reference's largest |logit|, BF16 weights. */
const MAX_ABS_LOGIT_ERR_BF16 = 1e-3;
/** The same for INT4 experts (both sides dequantise identical bytes, so only float rounding differs). */
const MAX_ABS_LOGIT_ERR_INT4 = 5e-3;

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const CLI = join(REPO, 'scripts', 'horizon.mjs');

const VARIANTS: { name: string; opts: TinyModelOptions }[] = [
  { name: 'mha', opts: { seed: 21 } },
  { name: 'gqa', opts: { seed: 22, config: { num_key_value_heads: 2 } } },
];

function horizon(args: string[]): void {
  execFileSync(process.execPath, [CLI, ...args], { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'], timeout: 120_000 });
}

function nativeLogits(modelDir: string, tokens: number[], weights: 'bf16' | 'int4', out: string): Float32Array[] {
  horizon(['logits', '--model', modelDir, '--tokens', tokens.join(','), '--weights', weights, '--out', out]);
  const parsed = JSON.parse(readFileSync(out, 'utf8')) as { tokens: number[]; logits: number[][] };
  expect(parsed.tokens).toEqual(tokens);
  return parsed.logits.map((row) => Float32Array.from(row));
}

type Comparison = { maxAbs: number; scale: number; rel: number; top1Mismatches: number[]; nearTies: number };

/** Errors of `got` against `want`; a top-1 mismatch is excused only where want's top-2 margin is within twice the measured max error. */
function compare(got: Float32Array[], want: Float32Array[]): Comparison {
  expect(got).toHaveLength(want.length);
  let maxAbs = 0;
  let scale = 0;
  want.forEach((row, t) => {
    expect(got[t]).toHaveLength(row.length);
    row.forEach((x, i) => {
      scale = Math.max(scale, Math.abs(x));
      maxAbs = Math.max(maxAbs, Math.abs(got[t]![i]! - x));
    });
  });
  const tieBand = 2 * maxAbs;
  const top1Mismatches: number[] = [];
  let nearTies = 0;
  want.forEach((row, t) => {
    const order = Array.from(row.keys()).sort((a, b) => row[b]! - row[a]!);
    const gotTop = got[t]!.indexOf(Math.max(...got[t]!));
    if (row[order[0]!]! - row[order[1]!]! <= tieBand) nearTies++;
    else if (gotTop !== order[0]) top1Mismatches.push(t);
  });
  return { maxAbs, scale, rel: maxAbs / scale, top1Mismatches, nearTies };
}

let root: string;
const models = new Map<string, { model: TinyModel; tokens: number[] }>();

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'parity-logits-'));
  for (const v of VARIANTS) {
    const model = await makeTinyModel(join(root, v.name), v.opts);
    const tokenizer = new Tokenizer(
      JSON.parse(readFileSync(join(model.dir, 'tokenizer.json'), 'utf8')) as object,
      JSON.parse(readFileSync(join(model.dir, 'tokenizer_config.json'), 'utf8')) as object,
    );
    const prompt = '<|endoftext|><|user|>\nWrite a poem about the sea, in lowercase.\n<|assistant|>\n';
    const tokens = [...tokenizer.encode(prompt, { add_special_tokens: false }).ids, model.tokenizerSize + 5];
    models.set(v.name, { model, tokens });
  }
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('native logits vs TS reference (runs once `horizon logits` is registered)', () => {
  it.each(VARIANTS.map((v) => [v.name]))('bf16 logits agree for the %s tiny model', (name) => {
    const { model, tokens } = models.get(name)!;
    const got = nativeLogits(model.dir, tokens, 'bf16', join(root, `${name}-bf16.json`));
    const want = referenceLogits(model.dir, tokens, 'bf16').logits;
    const c = compare(got, want);
    console.log(`parity bf16 ${name}: max abs err ${c.maxAbs.toExponential(3)} (scale ${c.scale.toFixed(3)}, rel ${c.rel.toExponential(3)}), near-ties ${c.nearTies}/${tokens.length}`);
    expect(c.rel).toBeLessThanOrEqual(MAX_ABS_LOGIT_ERR_BF16);
    expect(c.top1Mismatches).toEqual([]);
  });
});

describe('native pack + int4 logits vs TS reference', () => {
  it.each(VARIANTS.map((v) => [v.name]))('packs the %s tiny model to the reference bytes, then int4 logits agree', (name) => {
    const { model, tokens } = models.get(name)!;
    const packedDir = join(root, `${name}-packed`);
    horizon(['pack', '--model', model.dir, '--out', packedDir]);

    for (const f of ['config.json', 'tokenizer.json', 'tokenizer_config.json', 'special_tokens_map.json', 'generation_config.json']) {
      expect(readFileSync(join(packedDir, f)).equals(readFileSync(join(model.dir, f))), f).toBe(true);
    }
    const manifest = JSON.parse(readFileSync(join(packedDir, 'horizon-manifest.json'), 'utf8')) as Record<string, unknown>;
    expect(manifest).toMatchObject({ format: 'qpacked-v2', group_size: 32, codebook: 'hq4nl' });
    expect(readdirSync(packedDir).some((f) => /^model-qpacked-\d{5}-of-\d{5}\.safetensors$/.test(f))).toBe(true);

    const packed = readCheckpoint(packedDir);
    for (const meta of packed.metadata) expect(meta).toEqual({ format: 'qpacked-v2', group_size: '32', codebook: 'hq4nl' });
    const want = packTensorsReference(readCheckpoint(model.dir).tensors);
    expect([...packed.tensors.keys()].sort()).toEqual([...want.tensors.keys()].sort());
    const differing: string[] = [];
    for (const [tensorName, w] of want.tensors) {
      const g = packed.tensors.get(tensorName)!;
      expect({ name: tensorName, dtype: g.dtype, shape: g.shape }).toEqual({ name: tensorName, dtype: w.dtype, shape: w.shape });
      if (!Buffer.from(g.bytes).equals(Buffer.from(w.bytes))) differing.push(tensorName);
    }
    expect(differing).toEqual([]);

    const config = JSON.parse(readFileSync(join(model.dir, 'config.json'), 'utf8')) as ForwardConfig;
    const ref = olmoeForward(config, weightSource(want.tensors), tokens, { q8ExpertActivations: want.groupSize === 32, fp16KvCache: true }).logits;
    const got = nativeLogits(packedDir, tokens, 'int4', join(root, `${name}-int4.json`));
    const c = compare(got, ref);
    console.log(`parity int4 ${name}: max abs err ${c.maxAbs.toExponential(3)} (scale ${c.scale.toFixed(3)}, rel ${c.rel.toExponential(3)}), near-ties ${c.nearTies}/${tokens.length}`);
    expect(c.rel).toBeLessThanOrEqual(MAX_ABS_LOGIT_ERR_INT4);
    expect(c.top1Mismatches).toEqual([]);
  });
});
