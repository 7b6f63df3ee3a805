/**
 * Regenerates test/fixtures/int4/*.bin and cases.json with the TS reference packer:
 * npx tsx test/reference/make-int4-fixtures.ts. To add a case, append to CASES; the golden test picks it up.
 */
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { encodeBf16 } from '../../scripts/lib/bf16.js';
import { fillNormal, Prng } from '../../scripts/lib/prng.js';
import { quantizeQ4, tensorToFloat32 } from './qpacked.js';

/** One golden case as described in cases.json. */
export type Int4Case = {
  readonly name: string;
  readonly description: string;
  readonly rows: number;
  readonly cols: number;
  readonly groupSize: number;
  /** [rows, cols] BF16 little-endian. */
  readonly input: string;
  /** [rows, cols/2] U8, column 2j in the low nibble of byte j. */
  readonly qweight: string;
  /** [rows, cols/groupSize] FP16 little-endian. */
  readonly scales: string;
};

export const INT4_FIXTURE_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'int4');

const U = 2 ** -24;

const CASES: { name: string; description: string; rows: number; cols: number; groupSize: number; values: () => number[] }[] = [
  {
    name: 'hand',
    description:
      'row 0: ties at .5 with scale exactly 1.0, then an all-zero group (scale 0, nibbles 8); row 1: a subnormal FP16 scale (1 ulp = 2^-24) that rounds down so 9.75 and -9.75 clamp to 7 and -8, then a group with scale fp16(1/7) = 0x3092',
    rows: 2,
    cols: 16,
    groupSize: 8,
    values: () => [
      ...[7, 2.5, -2.5, 0.5, -0.5, 1.5, -7, 0],
      ...[0, 0, 0, 0, 0, 0, 0, 0],
      ...[9.75, -9.75, 8.5, -8.5, 1, -1, 0.5, -0.5].map((v) => v * U),
      ...[1, -0.3, 0.25, -1, 0.75, 0, 0.5, -0.125],
    ],
  },
  {
    name: 'random-g32',
    description: '8x64 normal(0, 0.05) weights with one outlier row and one all-negative group, group size 32',
    rows: 8,
    cols: 64,
    groupSize: 32,
    values: () => {
      const v = new Float32Array(8 * 64);
      fillNormal(new Prng(42), v, 0.05);
      v[3 * 64 + 5] = 3.0;
      for (let c = 32; c < 64; c++) v[6 * 64 + c] = -Math.abs(v[6 * 64 + c]!);
      return Array.from(v);
    },
  },
  {
    name: 'random-g128',
    description: '4x256 normal(0, 0.02) weights, group size 128 (the default for OLMoE widths)',
    rows: 4,
    cols: 256,
    groupSize: 128,
    values: () => {
      const v = new Float32Array(4 * 256);
      fillNormal(new Prng(7), v, 0.02);
      return Array.from(v);
    },
  },
];

function writeAtomic(path: string, data: Uint8Array | string): void {
  const tmp = `${path}.tmp-${process.pid}`;
  writeFileSync(tmp, data);
  renameSync(tmp, path);
}

function u16le(values: Uint16Array): Uint8Array {
  const out = new Uint8Array(values.length * 2);
  values.forEach((h, i) => {
    out[2 * i] = h & 0xff;
    out[2 * i + 1] = h >> 8;
  });
  return out;
}

/** Writes every case's input, qweight and scales files plus cases.json into `dir`. */
export function writeInt4Fixtures(dir = INT4_FIXTURE_DIR): Int4Case[] {
  mkdirSync(dir, { recursive: true });
  const described: Int4Case[] = [];
  for (const c of CASES) {
    const input = new Uint8Array(c.rows * c.cols * 2);
    encodeBf16(Float32Array.from(c.values()), input);
    const w = tensorToFloat32({ dtype: 'BF16', shape: [c.rows, c.cols], bytes: input });
    const { qweight, scales } = quantizeQ4(w, c.rows, c.cols, c.groupSize);
    const entry: Int4Case = {
      name: c.name,
      description: c.description,
      rows: c.rows,
      cols: c.cols,
      groupSize: c.groupSize,
      input: `${c.name}.input-bf16.bin`,
      qweight: `${c.name}.qweight-u8.bin`,
      scales: `${c.name}.scales-f16.bin`,
    };
    writeAtomic(join(dir, entry.input), input);
    writeAtomic(join(dir, entry.qweight), qweight);
    writeAtomic(join(dir, entry.scales), u16le(scales));
    described.push(entry);
  }
  writeAtomic(join(dir, 'cases.json'), `${JSON.stringify({ format: 'qpacked-v1', cases: described }, null, 2)}\n`);
  return described;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === resolve(process.argv[1])) writeInt4Fixtures();
