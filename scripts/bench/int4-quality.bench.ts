/**
 * What 4-bit experts cost in fidelity, per scheme, beside llama.cpp's Q4_0 (4.5 bits a weight: 32 weights per FP16
 * scale, d = max / -8, q = min(15, trunc(x / d + 8.5)), as ggml's reference quantizer writes it: test/reference/q4-0.ts):
 *  1. weight error (RMS of the dequantised weights' error / RMS of the weights) on Gaussian and Student-t (df 4)
 *     samples, with bits per weight;
 *  2. logits of a heavy-tailed random OLMoE (Student-t df 4 weights) through the native runtime: BF16 source
 *     against each scheme's experts (the others kept), as RMS(logit difference) / RMS(BF16 logits), top-1 agreement
 *     and mean KL(BF16 || scheme). qpacked-v2 runs as users run it (8-bit expert activations); the other schemes
 *     run as F32 checkpoints of their dequantised experts (float activations, which favours them), and Q4_0 also
 *     as llama.cpp runs it (the runtime's expertRounding 'q4_0': Q8_0 activations).
 * The quantisers come from the bit-exact TS reference of the packer (test/reference/qpacked.ts). Asserts nothing.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

import { loadModel } from '../../electron/worker/runtime/binding.js';
import type { ExpertRounding, WeightsKind } from '../../electron/worker/runtime/binding.js';
import { packModel } from '../../electron/worker/runtime/pack.js';
import { writeExpertVariant } from '../../test/reference/expert-variant.js';
import { q4_0RoundTrip } from '../../test/reference/q4-0.js';
import { dequantizeQ4, f16BitsToF32, f32ToF16Bits, quantizeQ4 } from '../../test/reference/qpacked.js';
import { makeTinyModel } from '../make-tiny-model.js';
import { fillNormal, Prng, studentLevels } from '../lib/prng.js';

type Scheme = { name: string; bits: number; roundTrip: (w: Float32Array, rows: number, cols: number) => Float32Array };

// qpacked-v1, the format before this one: symmetric, scale fp16(amax / 7), round half away from zero, group 128.
function uniformV1(w: Float32Array, rows: number, cols: number): Float32Array {
  const out = new Float32Array(w.length);
  for (let g = 0; g < (rows * cols) / 128; g++) {
    let amax = 0;
    for (let i = g * 128; i < g * 128 + 128; i++) amax = Math.max(amax, Math.abs(w[i]!));
    const s = f16BitsToF32(f32ToF16Bits(Math.fround(amax / 7)));
    for (let i = g * 128; i < g * 128 + 128; i++) {
      const x = s === 0 ? 0 : Math.fround(w[i]! / s);
      const q = Math.max(-8, Math.min(7, x < 0 ? -Math.floor(-x + 0.5) : Math.floor(x + 0.5)));
      out[i] = q * s;
    }
  }
  return out;
}

const hq4 = (g: number) => (w: Float32Array, rows: number, cols: number) => {
  const { qweight, scales } = quantizeQ4(w, rows, cols, g);
  return dequantizeQ4(qweight, scales, rows, cols);
};

const SCHEMES: Scheme[] = [
  { name: 'llama.cpp Q4_0 (g32)', bits: 4.5, roundTrip: (w) => q4_0RoundTrip(w) },
  { name: 'qpacked-v1 uniform amax/7 (g128)', bits: 4.125, roundTrip: uniformV1 },
  { name: 'qpacked-v2 hq4nl (g128)', bits: 4.125, roundTrip: hq4(128) },
  { name: 'qpacked-v2 hq4nl (g64)', bits: 4.25, roundTrip: hq4(64) },
  { name: 'qpacked-v2 hq4nl (g32, the default)', bits: 4.5, roundTrip: hq4(32) },
];

function relRms(a: Float32Array, b: Float32Array): number {
  let e = 0;
  let s = 0;
  for (let i = 0; i < a.length; i++) {
    e += (a[i]! - b[i]!) ** 2;
    s += b[i]! ** 2;
  }
  return Math.sqrt(e / s);
}

function weightErrors(): { name: string; bits: number; gauss: number; t4: number }[] {
  const n = 256 * 1024;
  const gauss = new Float32Array(n);
  fillNormal(new Prng(3), gauss, 0.02);
  const levels = studentLevels(0.02, 4);
  const rng = new Prng(4);
  const t4 = new Float32Array(n).map(() => levels[rng.nextU32() >>> 16]!);
  return SCHEMES.map((s) => ({
    name: s.name,
    bits: s.bits,
    gauss: relRms(s.roundTrip(gauss, 256, 1024), gauss),
    t4: relRms(s.roundTrip(t4, 256, 1024), t4),
  }));
}

async function logitsOf(dir: string, weights: WeightsKind, tokens: number[], expertRounding?: ExpertRounding): Promise<Float32Array[]> {
  const model = await loadModel({ dir, weights, backend: 'cpu', threads: 2 });
  try {
    return await model.logits(tokens, { expertRounding });
  } finally {
    model.close();
  }
}

function compareLogits(got: Float32Array[], want: Float32Array[]): { rel: number; top1: number; kl: number } {
  let e = 0;
  let s = 0;
  let agree = 0;
  let kl = 0;
  const argmax = (v: Float32Array) => v.reduce((best, x, i) => (x > v[best]! ? i : best), 0);
  const logSoftmax = (v: Float32Array) => {
    const m = Math.max(...v);
    const lse = m + Math.log(v.reduce((a, x) => a + Math.exp(x - m), 0));
    return Array.from(v, (x) => x - lse);
  };
  for (let t = 0; t < want.length; t++) {
    const g = got[t]!;
    const w = want[t]!;
    for (let i = 0; i < w.length; i++) {
      e += (g[i]! - w[i]!) ** 2;
      s += w[i]! ** 2;
    }
    agree += argmax(g) === argmax(w) ? 1 : 0;
    const lp = logSoftmax(w);
    const lq = logSoftmax(g);
    kl += lp.reduce((a, x, i) => a + Math.exp(x) * (x - lq[i]!), 0);
  }
  return { rel: Math.sqrt(e / s), top1: agree / want.length, kl: kl / want.length };
}

export async function bench(): Promise<unknown> {
  const rows = weightErrors();
  console.log('\nweight error (RMS of the error / RMS of the weights), 262,144 weights each');
  console.log(`  ${'scheme'.padEnd(38)} ${'bits/w'.padStart(7)} ${'Gaussian'.padStart(9)} ${'vs Q4_0'.padStart(8)} ${'t(df 4)'.padStart(9)} ${'vs Q4_0'.padStart(8)}`);
  const base = rows[0]!;
  for (const r of rows) {
    console.log(
      `  ${r.name.padEnd(38)} ${r.bits.toFixed(3).padStart(7)} ${r.gauss.toFixed(4).padStart(9)} ${(r.gauss / base.gauss).toFixed(2).padStart(7)}x ${r.t4.toFixed(4).padStart(9)} ${(r.t4 / base.t4).toFixed(2).padStart(7)}x`,
    );
  }

  const root = mkdtempSync(join(tmpdir(), 'horizon-bench-quality-'));
  try {
    const model = await makeTinyModel(join(root, 'src'), {
      seed: 9,
      tailDf: 4,
      config: { hidden_size: 512, intermediate_size: 256, num_hidden_layers: 4, num_attention_heads: 8, num_key_value_heads: 8, num_experts: 16, num_experts_per_tok: 4 },
    });
    const rng = new Prng(17);
    const tokens = Array.from({ length: 96 }, () => rng.nextU32() % model.tokenizerSize);
    const ref = await logitsOf(model.dir, 'bf16', tokens);
    await packModel({ src: model.dir, dst: join(root, 'int4'), threads: 2 });
    const results: { name: string; rel: number; top1: number; kl: number }[] = [];
    results.push({ name: 'qpacked-v2 hq4nl g32, native INT4 (8-bit activations)', ...compareLogits(await logitsOf(join(root, 'int4'), 'int4', tokens), ref) });
    for (const scheme of SCHEMES) {
      const dir = join(root, scheme.name.replace(/[^a-z0-9]+/gi, '-'));
      writeExpertVariant(model.dir, dir, scheme.roundTrip);
      results.push({ name: `${scheme.name}, float activations`, ...compareLogits(await logitsOf(dir, 'bf16', tokens), ref) });
    }
    results.push({ name: 'llama.cpp Q4_0 (g32), as run: Q8_0 activations', ...compareLogits(await logitsOf(model.dir, 'bf16', tokens, 'q4_0'), ref) });
    const q40 = results.find((r) => r.name.startsWith('llama.cpp Q4_0'))!;
    console.log(`\nlogits against the BF16 source: heavy-tailed random OLMoE (Student-t df 4 weights; hidden 512, 16 experts top-4, 4 layers), ${tokens.length} positions`);
    console.log(`  ${'experts'.padEnd(58)} ${'rel RMS err'.padStart(11)} ${'vs Q4_0'.padStart(8)} ${'top-1'.padStart(6)} ${'mean KL'.padStart(9)}`);
    for (const r of results) {
      console.log(`  ${r.name.padEnd(58)} ${r.rel.toExponential(3).padStart(11)} ${(r.rel / q40.rel).toFixed(2).padStart(7)}x ${r.top1.toFixed(3).padStart(6)} ${r.kl.toExponential(2).padStart(9)}`);
    }
    return { weights: rows, logits: results };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  await bench();
}
