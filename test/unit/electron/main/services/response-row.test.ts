import { describe, expect, it } from 'vitest';

import { validateRequest } from '../../../../../electron/common/ipc-validators.js';
import { toResponseRow } from '../../../../../electron/main/services/runs-service.js';
import { fakeTextTools } from '../../../evals/ifeval/fake-text-tools.js';

const stored = {
  key: 1019,
  position: 0,
  prompt: 'p',
  response: 'r',
  tokens: 3,
  finishReason: 'stop' as const,
  ttftMs: 1,
  decodeTokensPerSecond: 1,
  strictPass: false,
  loosePass: false,
  verdicts: [
    { instructionId: 'a', kwargs: {}, strict: true, loose: true },
    { instructionId: 'b', kwargs: {}, strict: false, loose: false },
    { instructionId: 'a', kwargs: {}, strict: true, loose: false },
  ],
};

describe('toResponseRow', () => {
  it.each([
    [undefined, undefined],
    ['a', { instructionId: 'a', strictPass: true, loosePass: false, finding: null }],
    ['b', { instructionId: 'b', strictPass: false, loosePass: false, finding: null }],
    // An id the prompt does not have: no verdict of its own (the filter would not have listed the row).
    ['c', undefined],
  ])('with instruction filter %s gives %o beside the prompt verdict', (id, expected) => {
    const row = toResponseRow(stored, id);
    expect(row.instructionVerdict).toEqual(expected);
    expect([row.strictPass, row.loosePass]).toEqual([false, false]);
  });
});

describe('toResponseRow with the text tools', () => {
  const commas = {
    ...stored,
    response: 'One, two.\nThree, four, five.',
    verdicts: [
      { instructionId: 'punctuation:no_comma', kwargs: {}, strict: false, loose: false },
      { instructionId: 'detectable_format:title', kwargs: {}, strict: false, loose: false },
    ],
  };

  it("gives the filtered instruction's finding", () => {
    expect(toResponseRow(commas, 'punctuation:no_comma', fakeTextTools()).instructionVerdict).toEqual({
      instructionId: 'punctuation:no_comma',
      strictPass: false,
      loosePass: false,
      finding: '3 commas; needs none',
    });
    expect(toResponseRow(commas, 'detectable_format:title', fakeTextTools()).instructionVerdict?.finding).toBe('no <<title>>');
  });

  it('takes the first occurrence that fails strict', () => {
    const twice = {
      ...commas,
      response: '"quoted"\nnot quoted',
      verdicts: [
        { instructionId: 'keywords:existence', kwargs: { keywords: ['quoted'] }, strict: true, loose: true },
        { instructionId: 'keywords:existence', kwargs: { keywords: ['zebra'] }, strict: false, loose: false },
      ],
    };
    expect(toResponseRow(twice, 'keywords:existence', fakeTextTools()).instructionVerdict).toEqual({
      instructionId: 'keywords:existence',
      strictPass: false,
      loosePass: false,
      finding: 'missing "zebra"',
    });
  });
});

describe('runs:responses validation', () => {
  it.each([
    [{ runId: 'r', sortBy: 'strict', descending: true }, true],
    [{ runId: 'r', sortBy: 'position' }, false],
    [{ runId: 'r', descending: 'yes' }, false],
  ])('%o valid: %s', (payload, valid) => {
    expect(validateRequest('runs:responses', payload).ok).toBe(valid);
  });
});
