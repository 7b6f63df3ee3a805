import { describe, expect, it } from 'vitest';

import { divergence } from '../../../../electron/common/divergence.js';

describe('divergence', () => {
  it.each<[string, string, string, ReturnType<typeof divergence>]>([
    ['the same text', 'One two three.', 'One two three.', null],
    ['a word changed mid-way: from its start', 'One two three four.', 'One two thirty four.', { at: 8, words: 2 }],
    ['one side goes on', 'One two', 'One two three', { at: 4, words: 1 }],
    ['one side goes on after a space', 'One two ', 'One two three', { at: 8, words: 2 }],
    ['the first word differs', 'Yes, sure.', 'No.', { at: 0, words: 0 }],
    ['the first word differs late in it', 'Absolutely.', 'Absolute.', { at: 0, words: 0 }],
    ['new lines count as spaces', 'Title\n\nBody one.', 'Title\n\nBody two.', { at: 12, words: 2 }],
    // A differing emoji's UTF-16 pair is not split: the cut goes back to its word's start.
    ['astral characters', 'Hi 😀 there', 'Hi 😃 there', { at: 3, words: 1 }],
    ['one side empty', '', 'Anything', { at: 0, words: 0 }],
  ])('%s', (_name, a, b, expected) => {
    expect(divergence(a, b)).toEqual(expected);
    // Where they part does not depend on which side is A.
    expect(divergence(b, a)).toEqual(expected);
  });
});
