import { describe, expect, it } from 'vitest';

import { accuracyIntervals, clusteredInterval, passRateInterval, wilsonInterval } from '../../../../electron/common/accuracy-intervals.js';

const close = (actual: readonly [number, number], expected: readonly [number, number], digits = 4) => {
  expect(actual[0]).toBeCloseTo(expected[0], digits);
  expect(actual[1]).toBeCloseTo(expected[1], digits);
};

describe('wilsonInterval', () => {
  // 95% Wilson score intervals worked by hand from the formula (z = 1.96), to four places.
  it.each([
    [0.5, 10, [0.2366, 0.7634]],
    [0, 10, [0, 0.2775]],
    [1, 10, [0.7225, 1]],
    [0.81, 100, [0.7222, 0.8749]],
  ] as const)('p %d over %d trials gives %j', (p, n, expected) => {
    close(wilsonInterval(p, n), expected);
  });

  it('stays within [0, 1] and narrows as trials grow', () => {
    const [lo, hi] = wilsonInterval(1, 3);
    expect(lo).toBeGreaterThan(0);
    expect(hi).toBeLessThanOrEqual(1);
    const width = (n: number) => wilsonInterval(0.4, n)[1] - wilsonInterval(0.4, n)[0];
    expect(width(541)).toBeLessThan(width(100));
    expect(() => wilsonInterval(0.5, 0)).toThrow('n must be positive');
  });
});

describe('passRateInterval', () => {
  it('is the Wilson interval of passed over count, and none without a count', () => {
    close(passRateInterval(5, 10)!, [0.2366, 0.7634]);
    close(passRateInterval(0, 10)!, [0, 0.2775]);
    expect(passRateInterval(0, 0)).toBeNull();
  });
});

describe('clusteredInterval', () => {
  it('counts correlated instructions as fewer trials', () => {
    // Prompts (passed of count): 1/1, 0/2, 2/2, 1/1. p = 4/6; residuals passed - p*count: 1/3, -4/3, 2/3, 1/3, squares
    // summing to 22/9; variance 4/3 * (22/9) / 36 = 22/243; effective trials p(1-p) / variance = (2/9) / (22/243) = 27/11.
    const prompts = [{ passed: 1, count: 1 }, { passed: 0, count: 2 }, { passed: 2, count: 2 }, { passed: 1, count: 1 }];
    close(clusteredInterval(prompts), [0.183, 0.947], 3);
    close(clusteredInterval(prompts), wilsonInterval(2 / 3, 27 / 11), 12);
    // Wider than six independent instructions would give.
    expect(clusteredInterval(prompts)[0]).toBeLessThan(wilsonInterval(2 / 3, 6)[0]);
  });

  it('never counts more trials than there are instructions', () => {
    // Each prompt passes exactly one of its two: no spread between prompts, a design effect of 0, capped at 1.
    close(clusteredInterval(Array.from({ length: 5 }, () => ({ passed: 1, count: 2 }))), wilsonInterval(0.5, 10), 12);
    // All pass: no variance either; the interval of ten passing instructions.
    close(clusteredInterval(Array.from({ length: 5 }, () => ({ passed: 2, count: 2 }))), [0.7225, 1]);
  });

  it('needs two prompts with instructions', () => {
    expect(() => clusteredInterval([{ passed: 1, count: 2 }, { passed: 0, count: 0 }])).toThrow('at least 2 prompts');
  });
});

describe('accuracyIntervals', () => {
  it('gives prompt level over prompts and instruction level over clustered instructions, strict and loose', () => {
    const prompts = [
      { count: 1, strict: 1, loose: 1 },
      { count: 2, strict: 0, loose: 1 },
      { count: 2, strict: 2, loose: 2 },
      { count: 1, strict: 1, loose: 1 },
    ];
    const r = accuracyIntervals(prompts)!;
    close(r.promptStrict, wilsonInterval(3 / 4, 4), 12);
    close(r.promptLoose, wilsonInterval(3 / 4, 4), 12);
    close(r.instructionStrict, wilsonInterval(2 / 3, 27 / 11), 12);
    close(r.instructionLoose, clusteredInterval(prompts.map((q) => ({ passed: q.loose, count: q.count }))), 12);
    expect(r.instructionLoose[0]).toBeGreaterThan(r.instructionStrict[0]);
  });

  it('has none below two prompts', () => {
    expect(accuracyIntervals([])).toBeNull();
    expect(accuracyIntervals([{ count: 3, strict: 1, loose: 2 }])).toBeNull();
  });
});
