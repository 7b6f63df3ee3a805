// The findings a response's detail shows beside its stored verdicts: given only where they have those verdicts.
import { describe, expect, it } from 'vitest';

import type { StoredResponse } from '../../../../../electron/main/db/response-repo.js';
import { verdictsWithFindings } from '../../../../../electron/main/services/response-findings.js';
import { fakeTextTools } from '../../../evals/ifeval/fake-text-tools.js';

function stored(response: string, verdicts: StoredResponse['verdicts']): StoredResponse {
  return {
    key: 5,
    position: 0,
    prompt: 'Answer in quotes without commas.',
    response,
    tokens: 9,
    finishReason: 'stop',
    ttftMs: 10,
    decodeTokensPerSecond: 50,
    verdicts,
  };
}

const quotation = { instructionId: 'startend:quotation', kwargs: {} };
const comma = { instructionId: 'punctuation:no_comma', kwargs: {} };

describe('verdictsWithFindings', () => {
  it('adds the strict finding, and the variant and finding of a loose-only pass', () => {
    const r = stored('Sure, here:\n"answer"', [
      { ...quotation, strict: false, loose: true },
      { ...comma, strict: false, loose: true },
    ]);
    expect(verdictsWithFindings(r, fakeTextTools())).toEqual([
      {
        ...quotation,
        strict: false,
        loose: true,
        finding: 'no double quotation mark at its start',
        looseFinding: { variant: 'without its first line', detail: 'wrapped in double quotation marks' },
      },
      {
        ...comma,
        strict: false,
        loose: true,
        finding: '1 comma; needs none',
        looseFinding: { variant: 'without its first line', detail: '0 commas; needs none' },
      },
    ]);
  });

  it('leaves out a finding whose verdict differs from the stored one (a run scored by another version)', () => {
    const r = stored('"answer"', [
      { ...quotation, strict: false, loose: false },
      { ...comma, strict: true, loose: true },
    ]);
    const [q, c] = verdictsWithFindings(r, fakeTextTools());
    expect(q).toEqual({ ...quotation, strict: false, loose: false, finding: null, looseFinding: null });
    expect(c!.finding).toBe('0 commas; needs none');
  });

  it('explains only the instruction asked for', () => {
    const r = stored('Sure, here:\n"answer"', [
      { ...quotation, strict: false, loose: true },
      { ...comma, strict: false, loose: true },
    ]);
    const [q, c] = verdictsWithFindings(r, fakeTextTools(), 'punctuation:no_comma');
    expect(q).toEqual({ ...quotation, strict: false, loose: true, finding: null, looseFinding: null });
    expect(c!.finding).toBe('1 comma; needs none');
    expect(verdictsWithFindings(r, fakeTextTools(), 'keywords:existence').map((v) => v.finding)).toEqual([null, null]);
  });

  it('gives the verdicts alone without text tools, for an unknown instruction id or kwargs this scorer rejects', () => {
    const plain = { ...comma, strict: true, loose: true };
    const none = { ...plain, finding: null, looseFinding: null };
    expect(verdictsWithFindings(stored('"answer"', [plain]), null)).toEqual([none]);
    const unknown = { instructionId: 'custom:made_up', kwargs: {}, strict: true, loose: true };
    expect(verdictsWithFindings(stored('"answer"', [plain, unknown]), fakeTextTools())).toEqual([
      none,
      { ...unknown, finding: null, looseFinding: null },
    ]);
    const badKwargs = { instructionId: 'length_constraints:number_words', kwargs: { num_words: -1, relation: 'at least' }, strict: true, loose: true };
    expect(verdictsWithFindings(stored('"answer"', [plain, badKwargs]), fakeTextTools())).toEqual([
      none,
      { ...badKwargs, finding: null, looseFinding: null },
    ]);
  });
});
