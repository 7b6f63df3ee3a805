// Rows from instructions_test.py (test_comma). To add a case: append a row.
import { describe, expect, it } from 'vitest';

import { check } from './check-helper.js';

describe('punctuation:no_comma', () => {
  it.each([
    ['\n  Every sentence is short. There is no need for a comma.\n  ', true],
    ['\n  Since the start of time, people have always found a way to punctuate.\n  ', false],
    ['A full-width comma， is not a comma', true],
  ])('%j -> %s', (response, expected) => {
    expect(check('punctuation:no_comma', {}, response)).toBe(expected);
  });
});
