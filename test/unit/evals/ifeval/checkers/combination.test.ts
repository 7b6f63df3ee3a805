// Rows from instructions_test.py (two_responses, prompt_repeat_answer). To add a case: append a row.
import { describe, expect, it } from 'vitest';

import { check } from './check-helper.js';

describe('combination:two_responses', () => {
  it.each([
    ['\n  This is response 1.\n  ******\n  This is response 2.\n  ', true],
    ['\n  This is response 1.\n  ******\n  This is response 1.\n  ', false],
    ['\n  This is response 1.\n  ******\n  This is response 2.\n  ******\n  This is response 3.\n  ', false],
    ['\n  ******\n  Response 1.\n  ******\n  ******\n  Response 2.\n  ******\n  ', false],
    ['\n  ******\n  Response 1\n  ******\n  Response 2\n  ******\n  ', true],
  ])('%#', (response, expected) => {
    expect(check('combination:two_responses', {}, response)).toBe(expected);
  });
});

describe('combination:repeat_prompt', () => {
  it.each([
    ['Write a CL description. Hi, Le and TJ, please\n  check this out. Thanks.\n  ', true],
    ['Hi, Le and TJ. Write a CL description. Thanks.\n  ', false],
    ['  write a cl DESCRIPTION. ok', true],
  ])('%#', (response, expected) => {
    expect(check('combination:repeat_prompt', { prompt_to_repeat: 'Write a CL description.' }, response)).toBe(expected);
  });
});
