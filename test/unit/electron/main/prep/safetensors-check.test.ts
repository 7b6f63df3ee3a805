import fs from 'node:fs';
import path from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { PrepError } from '../../../../../electron/main/prep/prep-error.js';
import { checkSafetensorsFile } from '../../../../../electron/main/prep/safetensors-check.js';
import { removeTempDirs, tempDir } from './test-repo.js';

function safetensors(header: Record<string, unknown>, dataBytes: number): Buffer {
  const json = Buffer.from(JSON.stringify(header));
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(json.length));
  return Buffer.concat([len, json, Buffer.alloc(dataBytes)]);
}

const GOOD = {
  __metadata__: { format: 'pt' },
  'a.weight': { dtype: 'BF16', shape: [2, 3], data_offsets: [0, 12] },
  'b.weight': { dtype: 'F32', shape: [2], data_offsets: [12, 20] },
};

async function check(bytes: Buffer): Promise<unknown> {
  const file = path.join(tempDir('st'), 'model.safetensors');
  fs.writeFileSync(file, bytes);
  return checkSafetensorsFile(file, 'model.safetensors').catch((e: unknown) => e);
}

afterAll(() => {
  removeTempDirs();
});

describe('checkSafetensorsFile', () => {
  it('accepts a well-formed file and returns its tensors and metadata', async () => {
    expect(await check(safetensors(GOOD, 20))).toEqual({
      tensors: ['a.weight', 'b.weight'],
      shapes: { 'a.weight': [2, 3], 'b.weight': [2] },
      metadata: { format: 'pt' },
    });
  });

  it('accepts tensors listed out of data order and empty tensors between them', async () => {
    const header = {
      late: { dtype: 'F32', shape: [2], data_offsets: [4, 12] },
      empty: { dtype: 'F32', shape: [0], data_offsets: [4, 4] },
      early: { dtype: 'F16', shape: [2], data_offsets: [0, 4] },
    };
    expect(await check(safetensors(header, 12))).toMatchObject({ tensors: ['late', 'empty', 'early'] });
  });

  it.each([
    ['a truncated data section', safetensors(GOOD, 15), /model\.safetensors: truncated: the tensors need 20 bytes of data but the file has 15/],
    ['trailing bytes', safetensors(GOOD, 24), /4 unexpected bytes after the tensor data/],
    ['a truncated header', safetensors(GOOD, 20).subarray(0, 30), /truncated: the header needs/],
    ['an implausible header length', Buffer.alloc(64, 0xff), /header length .* is implausible/],
    ['a tensor whose size disagrees with its shape', safetensors({ x: { dtype: 'F16', shape: [4], data_offsets: [0, 6] } }, 6), /'x' data size does not match/],
    ['an unknown dtype', safetensors({ x: { dtype: 'Q4', shape: [1], data_offsets: [0, 1] } }, 1), /'x' has an unknown dtype/],
    ['a tiny file', Buffer.alloc(3), /truncated or not a safetensors file \(3 bytes\)/],
    [
      'two tensors aliasing the same bytes',
      safetensors({ 'e.0.up': { dtype: 'BF16', shape: [2, 4], data_offsets: [0, 16] }, 'e.1.up': { dtype: 'BF16', shape: [2, 4], data_offsets: [0, 16] } }, 16),
      /model\.safetensors: tensors 'e\.0\.up' \(data bytes 0\.\.16\) and 'e\.1\.up' \(0\.\.16\) overlap/,
    ],
    [
      'a hole before the first tensor',
      safetensors({ a: { dtype: 'BF16', shape: [4], data_offsets: [8, 16] }, b: { dtype: 'BF16', shape: [8], data_offsets: [16, 32] } }, 32),
      /model\.safetensors: data bytes 0\.\.8 belong to no tensor \(before 'a'\)/,
    ],
    [
      'a hole between tensors',
      safetensors({ a: { dtype: 'BF16', shape: [4], data_offsets: [0, 8] }, b: { dtype: 'BF16', shape: [4], data_offsets: [12, 20] } }, 20),
      /data bytes 8\.\.12 belong to no tensor \(between 'a' and 'b'\)/,
    ],
    [
      'a partial overlap',
      safetensors({ a: { dtype: 'BF16', shape: [8], data_offsets: [0, 16] }, b: { dtype: 'BF16', shape: [4], data_offsets: [12, 20] } }, 20),
      /tensors 'a' \(data bytes 0\.\.16\) and 'b' \(12\.\.20\) overlap/,
    ],
  ])('rejects %s', async (_what, bytes, text) => {
    const e = await check(bytes);
    expect(e).toBeInstanceOf(PrepError);
    expect((e as PrepError).code).toBe('MODEL_INVALID');
    expect((e as PrepError).message).toMatch(text);
  });
});
