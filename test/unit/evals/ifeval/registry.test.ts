// Kwargs validation of the registry. To add a case: append [id, kwargs, error pattern] to the rejection table.
import { describe, expect, it } from 'vitest';

import { INSTRUCTIONS, buildChecker, isInstructionId } from '../../../../evals/ifeval/registry.js';
import { INSTRUCTION_IDS } from '../../../../evals/ifeval/types.js';
import { fakeTextTools } from './fake-text-tools.js';

describe('registry', () => {
  it('registers exactly the 25 instruction ids', () => {
    expect(INSTRUCTION_IDS).toHaveLength(25);
    expect(Object.keys(INSTRUCTIONS).sort()).toEqual([...INSTRUCTION_IDS].sort());
    expect(isInstructionId('keywords:existence')).toBe(true);
    expect(isInstructionId('keywords:key_sentences')).toBe(false);
  });

  it.each([
    ['keywords:existence', { keywords: ['a'], extra: 1 }, /unknown kwarg 'extra'/],
    ['punctuation:no_comma', { num_words: 3 }, /unknown kwarg 'num_words' \(accepted: none\)/],
    ['keywords:existence', { keywords: 'a' }, /must be a list of strings/],
    ['keywords:existence', { keywords: [] }, /must not be empty/],
    ['length_constraints:number_words', { num_words: '300', relation: 'at least' }, /must be an integer, got string/],
    ['length_constraints:number_words', { num_words: 2.5, relation: 'at least' }, /must be an integer/],
    ['length_constraints:number_words', { num_words: -1, relation: 'at least' }, /must be >= 0/],
    ['length_constraints:number_words', { num_words: 3, relation: 'at most' }, /"less than" or "at least"/],
    ['length_constraints:number_words', { num_words: 3 }, /missing kwarg 'relation'/],
    ['combination:repeat_prompt', { prompt_to_repeat: '' }, /must not be empty/],
    ['keywords:frequency', { keyword: '(?i)x', frequency: 1, relation: 'at least' }, /not a supported regular expression/],
  ] as const)('rejects %s %j', (id, kwargs, message) => {
    expect(() => buildChecker(id, kwargs)).toThrow(message);
  });

  it('accepts a zero count (upstream draws a random one only below zero)', () => {
    expect(buildChecker('detectable_content:number_placeholders', { num_placeholders: 0 }).check('none', fakeTextTools())).toBe(true);
    expect(buildChecker('length_constraints:number_words', { num_words: 0, relation: 'less than' }).check('a', fakeTextTools())).toBe(false);
  });

  it('drops null-valued kwargs (the Hugging Face copy lists every kwarg of every instruction)', () => {
    const kwargs = { num_highlights: 1, keywords: null, relation: null, language: null };
    expect(buildChecker('detectable_format:number_highlighted_sections', kwargs).check('*x*', fakeTextTools())).toBe(true);
    expect(() => buildChecker('detectable_format:number_highlighted_sections', { num_highlights: null })).toThrow(
      /missing kwarg 'num_highlights'/,
    );
  });

  it('names the instruction in the error', () => {
    expect(() => buildChecker('startend:end_checker', {})).toThrow(/^startend:end_checker: missing kwarg 'end_phrase'$/);
  });
});
