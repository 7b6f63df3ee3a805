// Rows from google-research instruction_following_eval/instructions_test.py, plus Python-semantics cases
// (Unicode \b and IGNORECASE, keywords used as regexes). To add a case: append [response, kwargs, expected].
import { describe, expect, it } from 'vitest';

import { check } from './check-helper.js';

const PARIS_1 = `
  Paris is a city of beauty and romance. The romantic river Seine winds its way
  through the city, past iconic landmarks like the Eiffel Tower and the Louvre
  Museum, where the Mona Lisa resides. Whether you're taking a boat cruise down
  the river or simply strolling along the banks, you're sure to be captivated
  by the city's charm.`;
const PARIS_2 = `
  Paris is a city of beauty, romance, and history. It is home to some of the
  most iconic landmarks in the world, including the Eiffel Tower, the Louvre
  Museum, and the Notre Dame Cathedral. The city is also known for its romantic
  river cruises, its delicious food, and its stylish people.
  `;
const NAZIS = `
  The Nazis came to power in 1933 through a combination of legal and illegal
  means. Hitler was appointed chancellor by President Paul von Hindenburg, and
  the Nazis quickly consolidated their power by passing a series of laws that
  restricted the rights of opposition parties and individuals. By 1934, Hitler
  had become dictator of Germany.
  `;
const DINOSAURS = `
  Dinosaurs were a diverse group of reptiles that dominated the Earth for over
  160 million years. They came in all shapes and sizes, from the tiny
  Compsognathus to the massive Argentinosaurus. Dinosaurs were the most
  successful land animals on Earth until they went extinct about 66 million
  years ago. The exact cause of their extinction is still unknown, but it
  is thought to have been a combination of factors, including an asteroid
  impact and climate change.
  `;
const GPT = `
  GPT, or Generative Pre-trained Transformer, is a family of neural network
  models that uses the transformer architecture. GPT models are trained on a
  massive dataset of text and code, and can be used for a variety of tasks,
  including text generation, translation, and question answering. GPT models
  have been shown to be very effective at these tasks, and are being used by
  a variety of companies and organizations like Google.
  `;

describe('keywords:existence', () => {
  it.each([
    [PARIS_1, ['romantic', 'river', 'Mona Lisa'], true],
    [PARIS_2, ['romantic', 'river', 'Mona Lisa'], false],
    ['The COLOR red', ['colou?r'], true],
    ['Une ÉCOLE', ['école'], true],
    ['nothing here', ['school'], false],
    // Python's IGNORECASE makes i, I, U+0130 (İ) and U+0131 (ı) one letter.
    ['The İnternet is huge.', ['internet'], true],
    ['Bılım is Turkish-ish.', ['bilim'], true],
    ['Bılım is Turkish-ish.', ['b[i]l[^x]m'], true],
    ['BİLİM', ['b[^i]lim'], false],
    ['İnternet', ['[a-z]nternet'], true],
    ['İnternet', ['[^a-z]nternet'], false],
    // The same holds for the letters written as \x, \u or \U escapes.
    ['The İnternet is huge.', ['\\x49nternet'], true],
    ['Bılım', ['b[\\u0130]l[\\U00000069]m'], true],
    ['BİLİM', ['b[^\\x69]lim'], false],
    ['ok \\x49', ['\\\\x49'], true],
  ])('%j with %j -> %s', (response, keywords, expected) => {
    expect(check('keywords:existence', { keywords }, response)).toBe(expected);
  });
});

describe('keywords:frequency', () => {
  const m1 = '\n  keyword, Keyword, KEYWORD\n  ';
  const m2 = '\n    *keyword\n    *Keyword\n    *KEYWORD\n  ';
  it.each([
    [m1, '  keyword ', 4, 'less than', true],
    [m1, '  keyword ', 3, 'at least', true],
    [m2, 'KEYWORD', 4, 'at least', false],
    [m2, 'KEYWORD', 3, 'at least', true],
    [m1, 'keyword', 3, 'less than', false],
    ['İN and in.', 'in', 2, 'at least', true],
  ])('%j: %j %s %s -> %s', (response, keyword, frequency, relation, expected) => {
    expect(check('keywords:frequency', { keyword, frequency, relation }, response)).toBe(expected);
  });
});

describe('keywords:forbidden_words', () => {
  it.each([
    [NAZIS, ['HOUSE', 'POWER', 'BECOME'], false],
    [DINOSAURS, ['HOUSE', 'POWER', 'BECOME'], true],
    [GPT, ['HOUSE', 'POWER', 'BECOME'], true],
    [NAZIS, ['GOOGLE', 'TEXT'], true],
    [DINOSAURS, ['GOOGLE', 'TEXT'], true],
    [GPT, ['GOOGLE', 'TEXT'], false],
    [GPT, ['GENE', 'TRANSFORM'], true],
    // Python's \b is Unicode: "é" is a word character, so "caf" is not a whole word in "café".
    ['un café noir', ['caf'], true],
    ['un café noir', ['café'], false],
    // A boundary on both sides: "cat" is not a whole word in "concat" or "cathode".
    ['a concat op', ['cat'], true],
    ['a cathode', ['cat'], true],
    ['We live İn a house.', ['in'], false],
    // U+0345 is a combining mark: not a word character for Python, so "cat" still ends at a word boundary.
    ['the cat\u0345', ['cat'], false],
  ])('%#: %j', (response, forbidden_words, expected) => {
    expect(check('keywords:forbidden_words', { forbidden_words }, response)).toBe(expected);
  });
});

describe('keywords:letter_frequency', () => {
  it.each([
    ["\n  There is the T. Four T's.\n  ", 'T', 4, 'at least', true],
    ['\n  asdfghjkl!!aA\n  ', 'a', 4, 'less than', true],
    ['\n  asdfghjkl!!aA\n  ', 'p', 4, 'at least', false],
    ['#one #two #three #four', '#', 4, 'at least', true],
    ['#one #two #three', '#', 4, 'at least', false],
  ])('%j: %j %s %s -> %s', (response, letter, let_frequency, let_relation, expected) => {
    expect(check('keywords:letter_frequency', { letter, let_frequency, let_relation }, response)).toBe(expected);
  });

  it.each([['ab'], [''], [' ']])('rejects letter %j', (letter) => {
    expect(() => check('keywords:letter_frequency', { letter, let_frequency: 1, let_relation: 'at least' }, 'x')).toThrow(
      /single non-whitespace character/,
    );
  });
});
