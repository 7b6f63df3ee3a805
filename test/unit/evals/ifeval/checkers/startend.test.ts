// Rows from instructions_test.py (end_checker, quotation). To add a case: append a row.
import { describe, expect, it } from 'vitest';

import { check } from './check-helper.js';

describe('startend:end_checker', () => {
  it.each([
    ['\n  The answer is 7. Any more questions?\n  ', '\n  Any more questions?\n  ', true],
    ['\n  At the end of this prompt I am required to say that this is the end.\n  ', '\n  This is the end.\n  ', true],
    ['\n  This will fail. Paris is cool.\n  ', '\n  This will fail.\n  ', false],
    ['"Ends with PEACE!"', 'Peace!', true],
  ])('%#', (response, end_phrase, expected) => {
    expect(check('startend:end_checker', { end_phrase }, response)).toBe(expected);
  });
});

describe('startend:quotation', () => {
  it.each([
    ['\n  "This entire message is wrapped in double quotation marks."\n  ', true],
    ['\n  "This message is wrapped in double quotation marks." But not everything.\n  ', false],
    ['"', false],
    ['""', true],
    ['He said "no"', false],
  ])('%j -> %s', (response, expected) => {
    expect(check('startend:quotation', {}, response)).toBe(expected);
  });
});
