// Rows from instructions_test.py (english_capital, english_lowercase, capital_word_frequency) with fake text
// tools. To add a case: append a row.
import { describe, expect, it } from 'vitest';

import { fakeTextTools } from '../fake-text-tools.js';
import { check } from './check-helper.js';

describe('change_case:english_capital', () => {
  it.each([
    ['\n  THIS IS AN ENGLISH SENTENCE. EVERY LETTER IS CAPITALIZED!!! AMAZING.\n  ', 'en', true],
    ['\n  Every Word Is Capitalized.\n  ', 'en', false],
    ['TOUT EN MAJUSCULES', 'fr', false],
    ['123 !!!', 'en', false],
  ])('%j (detected %s) -> %s', (response, detected, expected) => {
    expect(check('change_case:english_capital', {}, response, fakeTextTools(detected))).toBe(expected);
  });

  it('does not run language detection when the case test fails', () => {
    const tools = fakeTextTools();
    check('change_case:english_capital', {}, 'Mixed Case', tools);
    expect(tools.detected).toEqual([]);
  });
});

describe('change_case:english_lowercase', () => {
  it.each([
    ['\n  every letter is lowercase.\n  ', 'en', true],
    ['\n  Almost every letter is lowercase.\n  ', 'en', false],
    ['tout en minuscules', 'fr', false],
  ])('%j (detected %s) -> %s', (response, detected, expected) => {
    expect(check('change_case:english_lowercase', {}, response, fakeTextTools(detected))).toBe(expected);
  });
});

describe('change_case:capital_word_frequency', () => {
  const m1 = '\n  HERE there are THREE FUlly CAPITAL words.\n  ';
  const m2 = '\n  THERE are Four FULLY CAPITAL WORDS. Many Others Are Only Partially So.\n  ';
  it.each([
    [m1, 3, 'at least', true],
    [m2, 5, 'less than', true],
    [m2, 4, 'less than', false],
  ])('%#', (response, capital_frequency, capital_relation, expected) => {
    expect(check('change_case:capital_word_frequency', { capital_frequency, capital_relation }, response)).toBe(expected);
  });
});
