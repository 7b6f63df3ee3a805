/**
 * Regenerates test/fixtures/int4/*.bin and cases.json with the TS reference packer:
 * npx tsx test/reference/make-int4-fixtures.ts. To add a case, append to CASES; the golden test picks it up.
 */
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { encodeBf16 } from '../../scripts/lib/bf16.js';
import { fillNormal, Prng } from '../../scripts/lib/prng.js';
import { LEVELS, quantizeQ4, tensorToFloat32 } from './qpacked.js';

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

const LEVEL_CODES = [
  [0, 1, 2, 3, 4, 5, 6, 7, 15, 14, 13, 12, 11, 10, 9, 8, 8, 8, 8, 8, 8, 8, 8, 8],
  [15, 9, 3, 8, 12, 7, 1, 14, 8, 9, 10, 11, 12, 13, 14, 15, 7, 7, 7, 7, 7, 7, 7, 0],
];
const LEVEL_SCALES = [
  [2 ** -7, -(2 ** -8), 0],
  [2 ** -8, 1, 1],
];

const CASES: { name: string; description: string; rows: number; cols: number; groupSize: number; values: () => number[] }[] = [
  {
    name: 'hand',
    description:
      'exact codebook multiples: row 0 codes 0..7 x 2^-7, codes 15..8 x -2^-8 (reached through a negative scale), an all-zero group (scale 0, codes 8); row 1 codes x 2^-8 with the largest at the +109 end, then two groups x 1',
    rows: 2,
    cols: 24,
    groupSize: 8,
    values: () => LEVEL_CODES.flatMap((codes, r) => codes.map((u, c) => LEVELS[u]! * LEVEL_SCALES[r]![Math.floor(c / 8)]!)),
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
    name: 'heavy-g32',
    description: '4x256 normal(0, 0.02) weights with every 17th value six times larger (a heavy tail), group size 32 (the OLMoE default)',
    rows: 4,
    cols: 256,
    groupSize: 32,
    values: () => {
      const v = new Float32Array(4 * 256);
      fillNormal(new Prng(7), v, 0.02);
      for (let i = 0; i < v.length; i += 17) v[i] = v[i]! * 6;
      return Array.from(v);
    },
  },
  {
    name: 'random-g16',
    description: '4x64 normal(0, 0.02) weights, group size 16',
    rows: 4,
    cols: 64,
    groupSize: 16,
    values: () => {
      const v = new Float32Array(4 * 64);
      fillNormal(new Prng(11), v, 0.02);
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
  writeAtomic(join(dir, 'cases.json'), `${JSON.stringify({ format: 'qpacked-v2', cases: described }, null, 2)}\n`);
  return described;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === resolve(process.argv[1])) writeInt4Fixtures();
