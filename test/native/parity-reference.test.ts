/** Self-checks of the TS reference forward pass (test/reference/olmoe-forward.ts) before it judges the native runtime. */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { makeTinyModel } from '../../scripts/make-tiny-model.js';
import type { ForwardConfig } from '../reference/olmoe-forward.js';
import { olmoeForward, referenceLogits, weightSource } from '../reference/olmoe-forward.js';
import { readCheckpoint } from '../reference/safetensors.js';

const TOKENS = [320, 84, 104, 101, 256, 113, 117, 105, 99, 107];

let root: string;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'reference-forward-'));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

function maxAbsDiff(a: Float32Array[], b: Float32Array[]): number {
  let m = 0;
  a.forEach((row, t) => row.forEach((x, i) => (m = Math.max(m, Math.abs(x - b[t]![i]!)))));
  return m;
}

describe('reference OLMoE forward', () => {
  it('is causal: a prefix gives the same logits as the first positions of the whole sequence', async () => {
    const model = await makeTinyModel(join(root, 'causal'), { seed: 11 });
    const all = referenceLogits(model.dir, TOKENS, 'bf16');
    const prefix = referenceLogits(model.dir, TOKENS.slice(0, 4), 'bf16');
    expect(maxAbsDiff(prefix.logits, all.logits.slice(0, 4))).toBe(0);
    expect(all.logits).toHaveLength(TOKENS.length);
    expect(all.logits[0]).toHaveLength(model.config.vocab_size);
    const routes = new Set(all.routing.flat().map((r) => r.experts.join(',')));
    expect(routes.size).toBeGreaterThan(3);
  });

  it('treats GQA like MHA with each K/V head repeated for its query group', async () => {
    const model = await makeTinyModel(join(root, 'gqa'), { seed: 12, config: { num_key_value_heads: 2 } });
    const config = JSON.parse(readFileSync(join(model.dir, 'config.json'), 'utf8')) as ForwardConfig;
    const gqa = weightSource(readCheckpoint(model.dir).tensors);
    const headDim = config.hidden_size / config.num_attention_heads;
    const rep = config.num_attention_heads / config.num_key_value_heads!;
    const repeatHeads = (w: Float32Array, rowLen: number): Float32Array => {
      const out = new Float32Array(w.length * rep);
      for (let head = 0; head < config.num_attention_heads; head++) {
        const src = Math.floor(head / rep) * headDim * rowLen;
        out.set(w.subarray(src, src + headDim * rowLen), head * headDim * rowLen);
      }
      return out;
    };
    const mha = (name: string): Float32Array => {
      if (/\.(k|v)_proj\.weight$/.test(name)) return repeatHeads(gqa(name), config.hidden_size);
      if (name.endsWith('.k_norm.weight')) return repeatHeads(gqa(name), 1);
      return gqa(name);
    };
    const a = olmoeForward(config, gqa, TOKENS).logits;
    const b = olmoeForward({ ...config, num_key_value_heads: config.num_attention_heads }, mha, TOKENS).logits;
    expect(maxAbsDiff(a, b)).toBeLessThan(1e-4);
  });

  it('renormalises the top-k weights only when norm_topk_prob is set', async () => {
    const model = await makeTinyModel(join(root, 'norm'), { seed: 13, layers: 1 });
    const config = JSON.parse(readFileSync(join(model.dir, 'config.json'), 'utf8')) as ForwardConfig;
    const w = weightSource(readCheckpoint(model.dir).tensors);
    const plain = olmoeForward(config, w, TOKENS.slice(0, 3));
    const normed = olmoeForward({ ...config, norm_topk_prob: true }, w, TOKENS.slice(0, 3));
    for (const r of plain.routing[0]!) expect(r.weights.reduce((x, y) => x + y, 0)).toBeLessThan(0.999);
    for (const r of normed.routing[0]!) expect(r.weights.reduce((x, y) => x + y, 0)).toBeCloseTo(1, 6);
    expect(maxAbsDiff(plain.logits, normed.logits)).toBeGreaterThan(1e-3);
  });

  it('int4 mode stays close to bf16 (quantisation noise, not a different model)', async () => {
    const model = await makeTinyModel(join(root, 'int4'), { seed: 14 });
    const bf16 = referenceLogits(model.dir, TOKENS, 'bf16').logits;
    const int4 = referenceLogits(model.dir, TOKENS, 'int4').logits;
    const diff = maxAbsDiff(bf16, int4);
    expect(diff).toBeGreaterThan(0);
    expect(diff).toBeLessThan(2);
  });
});
