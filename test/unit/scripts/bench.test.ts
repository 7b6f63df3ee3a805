import { describe, expect, it } from 'vitest';

import { listBenches, selectBenches } from '../../../scripts/bench.js';

describe('bench driver', () => {
  it('lists the scripts/bench modules by name', () => {
    const names = listBenches();
    expect(names.length).toBeGreaterThan(0);
    expect([...names].sort()).toEqual(names);
    expect(names.every((n) => !n.endsWith('.ts'))).toBe(true);
  });

  it('selects by exact name, then by substring, keeping order', () => {
    const all = ['a-cpu', 'a-cuda', 'ifeval-score', 'ifeval-text'];
    expect(selectBenches(all, undefined)).toEqual(all);
    expect(selectBenches(all, 'ifeval-text')).toEqual(['ifeval-text']);
    expect(selectBenches(all, 'ifeval,a-cpu')).toEqual(['a-cpu', 'ifeval-score', 'ifeval-text']);
    expect(() => selectBenches(all, 'gpu')).toThrow(/no bench matches 'gpu' \(have: a-cpu, a-cuda, ifeval-score, ifeval-text\)/);
  });
});
