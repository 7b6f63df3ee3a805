import { describe, expect, it } from 'vitest';

import { parseExpertBudget } from '../../../../electron/cli/expert-budget.js';

describe('parseExpertBudget', () => {
  it.each([
    ['12', { expertBudget: 12 * 1024 ** 3 }],
    ['1.5GiB', { expertBudget: 1.5 * 1024 ** 3 }],
    ['2g', { expertBudget: 2 * 1024 ** 3 }],
    ['16slots', { expertSlots: 16 }],
    ['1 slot', { expertSlots: 1 }],
  ])('%s', (text, expected) => {
    expect(parseExpertBudget(text)).toEqual(expected);
  });

  it('gives the backend default when the flag is absent', () => {
    expect(parseExpertBudget(undefined)).toEqual({});
  });

  it.each(['', 'abc', '0', '0slots', '1.5slots', '-3', '12MB'])('rejects %j', (text) => {
    expect(() => parseExpertBudget(text)).toThrow(/--expert-budget/);
  });
});
