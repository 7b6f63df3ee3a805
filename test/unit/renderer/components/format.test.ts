import { describe, expect, it } from 'vitest';

import { deltaPoints, formatBytes, formatDelta, formatDuration, formatNumber, formatPercent } from '../../../../renderer/src/components/format.js';

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
});
