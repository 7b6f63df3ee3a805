import { describe, expect, it } from 'vitest';

import { describeLevel, mcnemarExact, pairedLevel, pairedRatioInterval } from '../../../../electron/common/paired-stats.js';
import type { PairedVerdict } from '../../../../electron/common/paired-stats.js';

/** Two-sided exact binomial p-values worked out by hand: 2 * sum_{i<=k} C(n, i) / 2^n, capped at 1. */
const EXACT: [number, number, number][] = [
  [0, 0, 1],
  [0, 6, 2 / 64], // n 6: 2 * 1/64
  [6, 0, 2 / 64],
  [1, 10, (2 * (1 + 11)) / 2048], // n 11
  [12, 4, (2 * (1 + 16 + 120 + 560 + 1820)) / 65536], // n 16: 0.0768
  [5, 5, 1], // 2 * 638/1024 > 1
  [3, 4, 1], // n 7: 2 * (1 + 7 + 21 + 35) / 128 = 1
  [2, 9, (2 * (1 + 11 + 55)) / 2048], // n 11: 0.0654
];

const pairs = (spec: [boolean, boolean, number][]): PairedVerdict[] => spec.map(([a, b, cluster]) => ({ a, b, cluster }));

describe('mcnemarExact', () => {
  it.each(EXACT)('b %i, c %i -> p %f', (b, c, p) => {
    expect(mcnemarExact(b, c)).toBeCloseTo(p, 12);
  });

  it('stays finite and tiny for hundreds of one-sided discordant pairs', () => {
    const p = mcnemarExact(0, 500);
    expect(p).toBeGreaterThan(0);
    expect(p / (2 * 2 ** -500)).toBeCloseTo(1, 10);
    expect(mcnemarExact(250, 250)).toBe(1);
  });
});

describe('pairedLevel', () => {
  // 10 prompts: 5 both pass, 3 regressions (A pass, B fail), 1 improvement, 1 both fail.
  const ten = pairs([
    [true, true, 1], [true, true, 2], [true, true, 3], [true, true, 4], [true, true, 5],
    [true, false, 6], [true, false, 7], [true, false, 8],
    [false, true, 9],
    [false, false, 10],
  ]);

  it('counts the 2x2 table and the accuracies', () => {
    const l = pairedLevel(ten, 2000);
    expect(l).toMatchObject({ n: 10, bothPass: 5, regressions: 3, improvements: 1, bothFail: 1, accuracyA: 0.8, accuracyB: 0.6 });
    expect(l.delta).toBeCloseTo(-0.2, 12);
    expect(l.pValue).toBeCloseTo((2 * (1 + 4)) / 16, 12); // n 4, k 1
  });

  it('gives a seeded interval: the same every time, around the difference, narrower with more prompts', () => {
    const a = pairedLevel(ten, 2000);
    const b = pairedLevel(ten, 2000);
    expect(a.ci95).toEqual(b.ci95);
    expect(a.ci95[0]).toBeLessThan(a.delta);
    expect(a.ci95[1]).toBeGreaterThan(a.delta);
    expect(a.ci95[0]).toBeGreaterThanOrEqual(-1);
    const hundred = Array.from({ length: 10 }, (_, k) => ten.map((p) => ({ ...p, cluster: p.cluster + 100 * k }))).flat();
    const wide = pairedLevel(hundred, 2000);
    expect(wide.delta).toBeCloseTo(-0.2, 12);
    expect(wide.ci95[1] - wide.ci95[0]).toBeLessThan(a.ci95[1] - a.ci95[0]);
  });

  it('resamples whole clusters: instructions of one prompt move together', () => {
    // One prompt with 4 instructions all regressing, 4 prompts of one unchanged instruction each.
    const grouped = pairs([
      [true, false, 1], [true, false, 1], [true, false, 1], [true, false, 1],
      [true, true, 2], [true, true, 3], [true, true, 4], [true, true, 5],
    ]);
    const l = pairedLevel(grouped, 4000);
    expect(l.delta).toBeCloseTo(-0.5, 12);
    // Without prompt 1 in a resample the difference is 0: some resamples must reach it.
    expect(l.ci95[1]).toBe(0);
  });

  it('is empty and neutral without pairs, and has a zero-width interval when nothing changes', () => {
    expect(pairedLevel([])).toMatchObject({ n: 0, accuracyA: 0, accuracyB: 0, delta: 0, ci95: [0, 0], pValue: 1 });
    const same = pairedLevel(pairs([[true, true, 1], [false, false, 2]]), 500);
    expect(same.ci95).toEqual([0, 0]);
    expect(same.pValue).toBe(1);
  });
});

describe('describeLevel', () => {
  it.each([
    [{ regressions: 0, improvements: 0, pValue: 1, delta: 0 }, 'no prompts change verdict'],
    [{ regressions: 3, improvements: 1, pValue: 0.625, delta: -0.2 }, "no significant difference (B regresses 3 prompts, improves 1, p = 0.63)"],
    [{ regressions: 12, improvements: 4, pValue: 0.0384, delta: -0.015 }, 'B is worse: B regresses 12 prompts, improves 4, p = 0.04'],
    [{ regressions: 0, improvements: 30, pValue: 1e-9, delta: 0.05 }, 'B is better: B regresses 0 prompts, improves 30, p < 0.001'],
    [{ regressions: 1, improvements: 1, pValue: 1, delta: 0 }, 'no significant difference (B regresses 1 prompt, improves 1, p = 1.00)'],
  ])('%j', (l, text) => {
    expect(describeLevel({ n: 541, bothPass: 0, bothFail: 0, accuracyA: 0, accuracyB: 0, ci95: [0, 0], ...l })).toBe(text);
  });
});

describe('pairedRatioInterval', () => {
  const total = (v: readonly number[]) => v.reduce((a, b) => a + b, 0);

  it('draws the same units on both sides', () => {
    // Two units, B/A 1 and 3 alone, 2 together: a quarter of the resamples give 1, a quarter 3, half 2.
    expect(pairedRatioInterval([1, 1], [1, 3], total)).toEqual([1, 3]);
    // B twice A everywhere: every resample says 2, however the units are drawn.
    expect(pairedRatioInterval([1, 5, 2, 7], [2, 10, 4, 14], total)).toEqual([2, 2]);
  });

  it('has no interval under two units or where A can sum to 0, and refuses unpaired sides', () => {
    expect(pairedRatioInterval([1], [2], total)).toBeNull();
    expect(pairedRatioInterval([0, 1], [1, 1], total)).toBeNull();
    expect(() => pairedRatioInterval([1, 2], [1], total)).toThrow(/2 units against 1/);
  });

  it('is seeded: the same inputs give the same interval', () => {
    const a = [3, 1, 4, 1, 5, 9, 2, 6];
    const b = [2, 7, 1, 8, 2, 8, 1, 8];
    expect(pairedRatioInterval(a, b, total)).toEqual(pairedRatioInterval(a, b, total));
    expect(pairedRatioInterval(a, b, total, 1000, 1)).not.toEqual(pairedRatioInterval(a, b, total, 1000, 2));
  });
});
