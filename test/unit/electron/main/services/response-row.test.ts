import { describe, expect, it } from 'vitest';

import { validateRequest } from '../../../../../electron/common/ipc-validators.js';
import { toResponseRow } from '../../../../../electron/main/services/runs-service.js';

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
    ['a', { instructionId: 'a', strictPass: true, loosePass: false }],
    ['b', { instructionId: 'b', strictPass: false, loosePass: false }],
    // An id the prompt does not have: no verdict of its own (the filter would not have listed the row).
    ['c', undefined],
  ])('with instruction filter %s gives %o beside the prompt verdict', (id, expected) => {
    const row = toResponseRow(stored, id);
    expect(row.instructionVerdict).toEqual(expected);
    expect([row.strictPass, row.loosePass]).toEqual([false, false]);
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
