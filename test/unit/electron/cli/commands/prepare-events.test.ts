import { describe, expect, it } from 'vitest';

import { formatPrepEvent } from '../../../../../electron/cli/commands/prepare.js';

describe('formatPrepEvent', () => {
  const progress = { type: 'progress', phase: 'download', doneBytes: 0, totalBytes: 0, bytesPerSec: 0, etaSec: null } as const;

  it.each([
    [999, '999 B'],
    [1000, '1.0 kB'],
    [999_949, '999.9 kB'],
    [1e6, '1.0 MB'],
    [1e9, '1.00 GB'],
    [13.8e9, '13.80 GB'],
  ])('writes %j bytes as %j', (n, text) => {
    expect(formatPrepEvent({ type: 'file', path: 'a.bin', source: 'download', size: n, sha256: 'ab' })).toBe(`ok a.bin (${text}, downloaded) sha256 ab`);
  });

  it.each([
    ['hf-cache', 'from the HF cache'],
    ['existing', 'already present'],
  ] as const)('says where the bytes of a %s file came from', (source, words) => {
    expect(formatPrepEvent({ type: 'file', path: 'a.bin', source, size: 5, sha256: 'ab' })).toBe(`ok a.bin (5 B, ${words}) sha256 ab`);
  });

  it.each([
    [null, '--'],
    [Infinity, '--'],
    [59.4, '59s'],
    [59.6, '1m00s'],
    [61, '1m01s'],
    [3599.6, '1h00m'],
    [3725, '1h02m'],
  ])('writes an ETA of %j seconds as %j', (etaSec, text) => {
    expect(formatPrepEvent({ ...progress, etaSec })).toMatch(new RegExp(` ETA ${text.replace(/-/g, '\\-')}$`));
  });

  it('gives the percentage done, the current file, and 0.0% of nothing', () => {
    expect(formatPrepEvent({ ...progress, phase: 'verify', doneBytes: 250, totalBytes: 1000, bytesPerSec: 2e6, etaSec: 3, file: 'model.safetensors' })).toBe(
      'verify    25.0%  250 B / 1.0 kB  2.0 MB/s  ETA 3s  model.safetensors',
    );
    expect(formatPrepEvent(progress)).toBe('download   0.0%  0 B / 0 B  0 B/s  ETA --');
  });

  it('names every file of a download of several at once', () => {
    expect(formatPrepEvent({ ...progress, doneBytes: 500, totalBytes: 1000, file: 'b.safetensors', files: ['a.safetensors', 'b.safetensors'] })).toBe(
      'download  50.0%  500 B / 1.0 kB  0 B/s  ETA --  a.safetensors, b.safetensors',
    );
  });

  it('writes the other events', () => {
    expect(formatPrepEvent({ type: 'phase', phase: 'pack', message: 'packing experts' })).toBe('[pack] packing experts');
    expect(formatPrepEvent({ type: 'resolved', repo: 'o/m', commit: 'c0ffee', files: [{ path: 'a', size: 1 }, { path: 'b', size: 2 }], totalBytes: 2.5e9 })).toBe(
      'resolved o/m to commit c0ffee: 2 files, 2.50 GB',
    );
    expect(formatPrepEvent({ type: 'retry', file: 'a.bin', attempt: 2, delayMs: 400, reason: 'ECONNRESET' })).toBe('retry a.bin (attempt 2, in 400 ms): ECONNRESET');
    expect(formatPrepEvent({ type: 'warning', message: 'slow disk' })).toBe('warning: slow disk');
    expect(formatPrepEvent({ type: 'done', manifestPath: '/d/m.json', modelDir: '/d/src', packedDir: '/d/int4' })).toBe('ready: /d/int4 (manifest /d/m.json)');
    expect(formatPrepEvent({ type: 'done', manifestPath: '/d/m.json', modelDir: '/d/src', packedDir: null })).toBe('ready: /d/src (manifest /d/m.json)');
  });
});
