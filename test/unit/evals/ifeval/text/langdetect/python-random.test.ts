// Expected values printed by CPython 3.11 (random.Random); to add a case, print the same calls in Python.
import { describe, expect, it } from 'vitest';

import { PythonRandom } from '../../../../../../evals/ifeval/text/langdetect/python-random.js';

describe('PythonRandom (CPython random.Random)', () => {
  it('random() after seed(0)', () => {
    const r = new PythonRandom(0);
    expect([r.random(), r.random(), r.random()]).toEqual([0.8444218515250481, 0.7579544029403025, 0.420571580830845]);
  });

  it('gauss() after seed(0), including the cached second value', () => {
    const r = new PythonRandom(0);
    expect([0, 1, 2, 3, 4].map(() => r.gauss(0, 1))).toEqual([
      0.9417154046806644, -1.3965781047011498, -0.6797144480784211, 0.3705035674606598, -1.016348894188071,
    ]);
  });

  it('seed() resets the cached gauss value', () => {
    const r = new PythonRandom(0);
    r.gauss();
    r.seed(0);
    expect(r.gauss()).toBe(0.9417154046806644);
  });

  it('getrandbits() and choice() after seed(12345678901) (a two-word seed)', () => {
    const r = new PythonRandom(12345678901);
    expect([1, 5, 17, 32].map((k) => r.getrandbits(k))).toEqual([1, 19, 42991, 3728613023]);
    expect([1, 2, 3, 7, 100, 1000, 65537].map((n) => r.choice([...Array(n).keys()]))).toEqual([0, 1, 2, 5, 14, 784, 21928]);
  });

  it.each([[0], [33], [1.5]])('getrandbits(%d) is rejected', (k) => {
    expect(() => new PythonRandom().getrandbits(k)).toThrow(/getrandbits/);
  });

  it('choice() on an empty sequence throws', () => {
    expect(() => new PythonRandom().choice([])).toThrow(/empty/);
  });
});
