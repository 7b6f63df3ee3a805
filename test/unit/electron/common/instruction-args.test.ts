import { describe, expect, it } from 'vitest';

import { instructionArgsText } from '../../../../electron/common/instruction-args.js';

describe('instructionArgsText', () => {
  it.each<[string, Record<string, unknown>, string]>([
    ['none', {}, ''],
    ['the dataset order, strings quoted', { relation: 'at least', num_words: 300 }, 'relation="at least", num_words=300'],
    ['unset ones left out', { num_highlights: 3, prompt_to_repeat: null, keywords: undefined }, 'num_highlights=3'],
    ['lists and quotes as JSON', { forbidden_words: ['a "b"', 'c'] }, 'forbidden_words=["a \\"b\\"","c"]'],
    ['every one unset', { language: null }, ''],
  ])('%s', (_name, kwargs, expected) => {
    expect(instructionArgsText(kwargs)).toBe(expected);
  });
});
