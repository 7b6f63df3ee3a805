/**
 * The TS qpacked-v1 reference packer against the golden files in test/fixtures/int4 (the C++ packer's test reads the
 * same files). To add a case, append it to CASES in test/reference/make-int4-fixtures.ts and rerun that script.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { makeTinyModel } from '../../scripts/make-tiny-model.js';
import type { Int4Case } from '../reference/make-int4-fixtures.js';
import { INT4_FIXTURE_DIR } from '../reference/make-int4-fixtures.js';
import {
  chooseGroupSize, dequantizeQ4, f16BitsToF32, f32ToF16Bits, packTensorsReference, quantizeQ4, tensorToFloat32,
} from '../reference/qpacked.js';
import { readCheckpoint } from '../reference/safetensors.js';

const { cases } = JSON.parse(readFileSync(join(INT4_FIXTURE_DIR, 'cases.json'), 'utf8')) as { cases: Int4Case[] };
const bin = (name: string) => new Uint8Array(readFileSync(join(INT4_FIXTURE_DIR, name)));

function packCase(c: Int4Case) {
  const w = tensorToFloat32({ dtype: 'BF16', shape: [c.rows, c.cols], bytes: bin(c.input) });
  const { qweight, scales } = quantizeQ4(w, c.rows, c.cols, c.groupSize);
  const scaleBytes = new Uint8Array(scales.length * 2);
  scales.forEach((h, i) => {
    scaleBytes[2 * i] = h & 0xff;
    scaleBytes[2 * i + 1] = h >> 8;
  });
  return { w, qweight, scaleBytes };
}

describe('qpacked-v1 reference packer', () => {
  it.each(cases.map((c) => [c.name, c] as const))('reproduces golden case %s bit for bit', (_name, c) => {
    const { qweight, scaleBytes } = packCase(c);
    expect(Buffer.from(qweight).toString('hex')).toBe(Buffer.from(bin(c.qweight)).toString('hex'));
    expect(Buffer.from(scaleBytes).toString('hex')).toBe(Buffer.from(bin(c.scales)).toString('hex'));
    expect(qweight.length).toBe((c.rows * c.cols) / 2);
    expect(scaleBytes.length).toBe((c.rows * c.cols * 2) / c.groupSize);
  });

  it('matches the hand-computed bytes of the hand case', () => {
    const hand = cases.find((c) => c.name === 'hand')!;
    // Row 0: [7, 2.5, -2.5, .5, -.5, 1.5, -7, 0] / 1.0 -> q [7, 3, -3, 1, -1, 2, -7, 0] (ties away from zero),
    // nibbles q+8, low nibble = even column; then an all-zero group -> 0x88.
    // Row 1: scale 2^-24 (FP16 subnormal 0x0001): 9.75 -> 7 and -9.75 -> -8 (clamp), .5 -> 1; then scale 0x3092.
    expect(Buffer.from(bin(hand.qweight)).toString('hex')).toBe('bf95a781888888880f0f79796f1a8d7c');
    expect(Buffer.from(bin(hand.scales)).toString('hex')).toBe('003c000001009230');
  });

  it('dequantises within half a step of the input where nothing clamps', () => {
    const c = cases.find((x) => x.name === 'random-g32')!;
    const { w, qweight } = packCase(c);
    const scales = bin(c.scales);
    const back = dequantizeQ4(qweight, scales, c.rows, c.cols);
    for (let i = 0; i < w.length; i++) {
      const g = Math.floor(i / c.groupSize);
      const scale = f16BitsToF32(scales[2 * g]! | (scales[2 * g + 1]! << 8));
      expect(Math.abs(back[i]! - w[i]!)).toBeLessThanOrEqual(scale / 2 + 1e-12);
    }
  });

  it('rounds float32 to FP16 to nearest even, including subnormals and overflow', () => {
    expect(f32ToF16Bits(Math.fround(1 / 7))).toBe(0x3092);
    expect(f32ToF16Bits(65504)).toBe(0x7bff);
    expect(f32ToF16Bits(65520)).toBe(0x7c00);
    expect(f32ToF16Bits(2 ** -24)).toBe(0x0001);
    expect(f32ToF16Bits(2 ** -25)).toBe(0x0000);
    expect(f32ToF16Bits(3 * 2 ** -25)).toBe(0x0002);
    expect(f32ToF16Bits(-(1 + 2 ** -11))).toBe(0xbc00);
    expect(f32ToF16Bits(1 + 3 * 2 ** -11)).toBe(0x3c02);
    const mismatches: number[] = [];
    for (let h = 0; h < 0x10000; h++) {
      if ((h & 0x7c00) === 0x7c00 && (h & 0x3ff) !== 0) continue;
      if (f32ToF16Bits(f16BitsToF32(h)) !== h) mismatches.push(h);
    }
    expect(mismatches).toEqual([]);
  });

  it('chooses the group size as the spec says', () => {
    expect(chooseGroupSize([2048, 1024])).toBe(128);
    expect(chooseGroupSize([64, 32])).toBe(32);
    expect(chooseGroupSize([48, 64])).toBe(16);
    expect(chooseGroupSize([48], 24)).toBe(24);
    expect(() => chooseGroupSize([64], 3)).toThrow(/even/);
    expect(() => chooseGroupSize([32], 64)).toThrow(/divide/);
    expect(() => chooseGroupSize([12])).toThrow(/no group size/);
  });

  it('packs a tiny checkpoint with the spec names, dtypes and shapes', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'qpacked-ref-'));
    try {
      const model = await makeTinyModel(dir, { seed: 5, layers: 1 });
      const packed = packTensorsReference(readCheckpoint(model.dir).tensors);
      expect(packed.groupSize).toBe(32);
      const t = (name: string) => packed.tensors.get(name);
      expect(t('model.layers.0.mlp.experts.3.up_proj.weight')).toBeUndefined();
      expect(t('model.layers.0.mlp.experts.3.up_proj.qweight')).toMatchObject({ dtype: 'U8', shape: [32, 32] });
      expect(t('model.layers.0.mlp.experts.3.up_proj.scales')).toMatchObject({ dtype: 'F16', shape: [32, 2] });
      expect(t('model.layers.0.mlp.experts.3.down_proj.qweight')).toMatchObject({ dtype: 'U8', shape: [64, 16] });
      expect(t('model.layers.0.mlp.experts.3.down_proj.scales')).toMatchObject({ dtype: 'F16', shape: [64, 1] });
      expect(t('model.layers.0.mlp.gate.weight')).toMatchObject({ dtype: 'F16', shape: [8, 64] });
      expect(t('lm_head.weight')).toMatchObject({ dtype: 'F16', shape: [model.config.vocab_size, 64] });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
