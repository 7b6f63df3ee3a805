import { describe, expect, it } from 'vitest';

import { histogram, quantile, summarize } from '../../../../electron/common/perf-stats.js';

describe('perf stats', () => {
  it.each([
    // numpy.quantile([1, 2, 3, 4], q) with linear interpolation: 1.75, 2.5, 3.7, 3.97.
    [[1, 2, 3, 4], 0.25, 1.75],
    [[1, 2, 3, 4], 0.5, 2.5],
    [[1, 2, 3, 4], 0.9, 3.7],
    [[1, 2, 3, 4], 0.99, 3.97],
    [[5], 0.9, 5],
    [[1, 10], 0, 1],
    [[1, 10], 1, 10],
  ])('quantile(%o, %s) = %s', (v, q, expected) => {
    expect(quantile(v, q)).toBeCloseTo(expected, 12);
  });

  it('summarizes the finite values only, and says nothing of none', () => {
    expect(summarize([3, null, 1, Number.NaN, 2])).toEqual({ n: 3, mean: 2, p50: 2, p90: 2.8, p99: 2.98, min: 1, max: 3 });
    expect(summarize([null])).toBeNull();
    expect(() => quantile([], 0.5)).toThrow('quantile of no values');
  });

  it('bins equal widths with the maximum in the last bin', () => {
    expect(histogram([0, 1, 2, 3, 4, 10], 5)).toEqual([
      { lo: 0, hi: 2, count: 2 },
      { lo: 2, hi: 4, count: 2 },
      { lo: 4, hi: 6, count: 1 },
      { lo: 6, hi: 8, count: 0 },
      { lo: 8, hi: 10, count: 1 },
    ]);
    expect(histogram([7, 7, null], 4)).toEqual([{ lo: 7, hi: 8, count: 2 }]);
    expect(histogram([], 4)).toEqual([]);
  });
});
