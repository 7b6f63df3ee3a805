import { describe, expect, it } from 'vitest';

import { parseExpertBudget } from '../../../../electron/cli/expert-budget.js';

describe('parseExpertBudget', () => {
  it.each([
    ['12', { expertBudget: 12 * 1024 ** 3 }],
    ['1.5GiB', { expertBudget: 1.5 * 1024 ** 3 }],
    ['2g', { expertBudget: 2 * 1024 ** 3 }],
    ['16slots', { expertSlots: 16 }],
    ['1 slot', { expertSlots: 1 }],
    [' 2 GiB ', { expertBudget: 2 * 1024 ** 3 }],
    // A fraction of a GiB is whole bytes.
    ['0.1', { expertBudget: Math.floor(0.1 * 1024 ** 3) }],
  ])('%s', (text, expected) => {
    expect(parseExpertBudget(text)).toEqual(expected);
    const { expertBudget } = parseExpertBudget(text);
    if (expertBudget !== undefined) expect(Number.isInteger(expertBudget)).toBe(true);
  });

  it('gives the backend default when the flag is absent', () => {
    expect(parseExpertBudget(undefined)).toEqual({});
  });

  it.each(['', 'abc', '0', '0slots', '1.5slots', '-3', '12MB'])('rejects %j', (text) => {
    expect(() => parseExpertBudget(text)).toThrow(/--expert-budget/);
  });
});
