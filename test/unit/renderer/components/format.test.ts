import { describe, expect, it } from 'vitest';

import {
  capitalize,
  deltaPoints,
  formatBytes,
  formatDate,
  formatDelta,
  formatDuration,
  formatNumber,
  formatPercent,
  formatRate,
  shortSha,
  baseName,
  withLabel,
} from '../../../../renderer/src/components/format.js';

describe('format', () => {
  it.each([
    [0, '0 B'],
    [1023, '1023 B'],
    [1536, '1.5 KiB'],
    [3.5 * 2 ** 30, '3.5 GiB'],
    [2 ** 30 - 1, '1.0 GiB'],
    [1023.9 * 2 ** 20, '1023.9 MiB'],
    [null, '—'],
  ])('formatBytes(%s) = %s', (n, s) => expect(formatBytes(n)).toBe(s));

  it.each([
    [5, '5s'],
    [65, '1m 05s'],
    [3725, '1h 02m'],
    [null, '—'],
    [-1, '—'],
  ])('formatDuration(%s) = %s', (n, s) => expect(formatDuration(n)).toBe(s));

  it('groups thousands in figures as in counts ("3,616.2 tok/s" beside "561,463 tokens")', () => {
    // Whatever the locale's separators: a group separator, then one decimal.
    expect(formatNumber(123456.78)).toMatch(/^123\D456\D8$/);
    expect(formatNumber(42.04, 0)).toBe('42');
    expect(formatNumber(null)).toBe('—');
  });

  it('formats percentages and deltas in points', () => {
    expect(formatPercent(0.76852)).toBe('76.9%');
    expect(formatDelta(0.5, 0.525)).toBe('+2.5 pp');
    expect(formatDelta(0.5, 0.4)).toBe('−10.0 pp');
    expect(formatDelta(null, 0.4)).toBe('—');
    // What rounds to no change says so, neither up nor down.
    expect(formatDelta(0.5, 0.4996)).toBe('±0.0 pp');
    expect(deltaPoints(0.5, 0.4996)).toBe(0);
    expect(formatDelta(0.5, 0.4994)).toBe('−0.1 pp');
  });

  it.each([
    [1024, '1.0 KiB'],
    [Infinity, '—'],
    [NaN, '—'],
    [-1536, '-1.5 KiB'],
    [-(2 ** 30 - 1), '-1.0 GiB'],
    // TiB is the largest unit: nothing rolls over past it.
    [2 ** 50, '1024.0 TiB'],
    [1023.96 * 2 ** 40, '1024.0 TiB'],
  ])('formatBytes(%s) = %s, at the edges', (n, s) => expect(formatBytes(n)).toBe(s));

  it('formats rates, and no rate when nothing moves', () => {
    expect(formatRate(1536)).toBe('1.5 KiB/s');
    // A fraction of a byte per second that rounds to 1024 B/s is 1.0 KiB/s.
    expect(formatRate(1023.6)).toBe('1.0 KiB/s');
    expect(formatRate(1023.4)).toBe('1023 B/s');
    expect(formatRate(0)).toBe('—');
  });

  it.each([
    [0.5, '0.5s'],
    [59.4, '59s'],
    [59.6, '1m 00s'],
    [60, '1m 00s'],
    [3600, '1h 00m'],
    [Infinity, '—'],
  ])('formatDuration(%s) = %s, at the edges', (n, s) => expect(formatDuration(n)).toBe(s));

  it('writes no figure for what is not a number, and as many decimals as asked', () => {
    expect(formatPercent(NaN)).toBe('—');
    expect(formatPercent(0.5, 0)).toBe('50%');
    expect(formatNumber(Infinity)).toBe('—');
    expect(deltaPoints(0.5, null)).toBeNull();
    expect(formatDelta(0.5, undefined)).toBe('—');
    expect(shortSha('7f1c97f0123456789')).toBe('7f1c97f');
  });

  it.each([
    ['/home/ana/results/run-1.zip', 'run-1.zip'],
    ['C:\\Users\\ana\\Downloads\\run-2.zip', 'run-2.zip'],
    ['\\\\server\\share\\run-3.zip', 'run-3.zip'],
    ['run-4.zip', 'run-4.zip'],
    ['/trailing/slash/', 'slash'],
  ])('names the file of %s', (p, name) => {
    expect(baseName(p)).toBe(name);
  });

  it('writes a date in the local format, and an unreadable one as it came', () => {
    expect(formatDate('')).toBe('—');
    expect(formatDate(null)).toBe('—');
    expect(formatDate('not a date')).toBe('not a date');
    const shown = formatDate('2024-05-06T07:08:09Z');
    expect(shown).not.toBe('2024-05-06T07:08:09Z');
    expect(shown).toContain('2024');
  });
});

describe('capitalize', () => {
  it.each([
    ['cut at max new tokens', 'Cut at max new tokens'],
    ['no usable CUDA device', 'No usable CUDA device'],
    ['', ''],
    ['Already', 'Already'],
  ])('%j reads %j', (text, expected) => {
    expect(capitalize(text)).toBe(expected);
  });
});

describe('withLabel', () => {
  it.each([
    ['run-1', null, 'run-1'],
    ['perf-2', 'one budget', 'perf-2 · one budget'],
  ] as const)('%s with %j reads %s', (id, label, expected) => {
    expect(withLabel(id, label)).toBe(expected);
  });
});
