/**
 * A copy of a BF16 checkpoint as one F32 safetensors file with every routed expert matrix replaced by its round trip
 * through a 4-bit scheme (the rest exact): how another scheme's experts run through the native BF16 path.
 */
import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';

import { writeSafetensorsFile } from '../../scripts/lib/safetensors-writer.js';
import type { TensorSource } from '../../scripts/lib/safetensors-writer.js';
import { EXPERT_WEIGHT, tensorToFloat32 } from './qpacked.js';
import { readCheckpoint } from './safetensors.js';

export type RoundTrip = (w: Float32Array, rows: number, cols: number) => Float32Array;

export function writeExpertVariant(src: string, dst: string, roundTrip: RoundTrip): void {
  mkdirSync(dst, { recursive: true });
  copyFileSync(join(src, 'config.json'), join(dst, 'config.json'));
  const { tensors } = readCheckpoint(src);
  const sources: TensorSource[] = [...tensors].map(([name, t]) => {
    let values = tensorToFloat32(t);
    if (EXPERT_WEIGHT.test(name)) values = roundTrip(values, t.shape[0]!, t.shape[1]!);
    return { name, dtype: 'F32', shape: t.shape, write: (sink) => sink(new Uint8Array(values.buffer, values.byteOffset, values.byteLength)) };
  });
  writeSafetensorsFile(join(dst, 'model.safetensors'), sources);
}
