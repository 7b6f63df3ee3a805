// Rows from instructions_test.py (number_sentences, paragraph_checker, num_words, paragraph_first_word), plus
// Unicode word counts. Sentence counts use the fake tokenizer (the Punkt port has its own tests).
// To add a case: append [response, kwargs..., expected].
import { describe, expect, it } from 'vitest';

import { countWords, splitIntoSentences } from '../../../../../evals/ifeval/text/instructions-util.js';
import { check } from './check-helper.js';

describe('length_constraints:number_sentences', () => {
  it.each([
    ['xx,x. xx,x! xx/x. x{x}x?', 'less than', 4, false],
    ['xxxx. xx,x! xxxx. x(x)x?', 'less than', 5, true],
    ['xxxx. xx,x! xx|x. x&x x?', 'at least', 4, true],
    ['xx-x. xx,x! xx}x. x,xx?', 'at least', 5, false],
  ])('%j %s %s -> %s', (response, relation, num_sentences, expected) => {
    expect(check('length_constraints:number_sentences', { relation, num_sentences }, response)).toBe(expected);
  });
});

describe('length_constraints:number_paragraphs', () => {
  it.each([
    ['\n  paragraph 1\n  ***\n  paragraph 2\n  ***\n  paragraph 3', 3, true],
    ['\n          ***\n  paragraph 1\n          ***\n      paragraph 2\n          ***\n      paragraph 3', 3, true],
    ['\n  paragraph 1\n          ***\n      paragraph 2\n          ***\n      paragraph 3\n          ***', 3, true],
    ['\n  paragraph 1\n          ***\n      paragraph 2\n          ***\n          ***', 2, false],
    ['one\n***\ntwo', 3, false],
  ])('%j, %s -> %s', (response, num_paragraphs, expected) => {
    expect(check('length_constraints:number_paragraphs', { num_paragraphs }, response)).toBe(expected);
  });
});

describe('length_constraints:number_words', () => {
  const m1 = '\n  d3sCRi7 lArge lAnguagE M0del w1tH 20 w0RdS.';
  const m2 = '\n  L4RGE L4NGU4GE M0DEL: AI syst3m th4t und3rstands, g3n3r4tes, or tr4nsforms\n  l4ngu4g3 b4s3d on pr3vious l3arning & d4t4.';
  it.each([
    [m1, 'less than', 8, true],
    [m2, 'less than', 16, false],
    [m2, 'at least', 16, true],
    // Combining marks are not \w in Python: this Devanagari word is 4 tokens.
    ['क्षत्रिय', 'at least', 4, true],
    ['क्षत्रिय', 'at least', 5, false],
  ])('%j %s %s -> %s', (response, relation, num_words, expected) => {
    expect(check('length_constraints:number_words', { relation, num_words }, response)).toBe(expected);
  });

  it('counts \\w+ runs like Python', () => {
    expect(countWords('snake_case-word ½ ٣ naïve')).toBe(5);
  });
});

describe('length_constraints:nth_paragraph_first_word', () => {
  const t1 = '\n  paragraph 1\n\n  I paragraph 2\n\n  paragraph 3';
  const t2 = '\n  paragraph 1\n\n  I paragraph 2';
  const t3 = '\n  paragraph 1\n\n  fail paragraph 2\n\n  paragraph 3';
  const t4 =
    "\n  Wow this is a very long response.\n\n  I can't believe there is more than three paragraphs.\n\n  Really more than three? No way!\n\n  I can't believe it but I guess I am living proof.\n\n  Haha, you go that right.";
  const t5 =
    '\n  Wow this is a very long response.\n\n  I can\'t believe there is more than three paragraphs.\n\n  "Really?! more than three? No way!"\n\n  I can\'t believe it but I guess I am living proof.\n\n  Haha, you go that right.';
  const t6 =
    "\n  Wow this is a very long response.\n\n  I can't believe there is more than three paragraphs.\n\n  Rea!lly more than three? No way!\n\n  I can't believe it but I guess I am living proof.\n\n  Haha, you go that right.";
  it.each([
    [t1, 3, 2, 'I', true],
    [t2, 3, 2, 'I', false],
    [t3, 3, 2, 'I', false],
    [t4, 5, 5, 'haha', true],
    [t5, 5, 3, 'Really', true],
    [t6, 5, 3, 'Really', false],
    [t1, 3, 1, 'paragraph', true],
    // Fewer non-blank paragraphs than nth: not followed (and no index past the split).
    ['only one', 2, 2, 'x', false],
    // Blank parts do not count, but nth still indexes the raw "\n\n" split: paragraph 2 here is the blank one.
    ['a\n\n \n\nb', 2, 2, 'b', false],
  ])('%#', (response, num_paragraphs, nth_paragraph, first_word, expected) => {
    expect(
      check('length_constraints:nth_paragraph_first_word', { num_paragraphs, nth_paragraph, first_word }, response),
    ).toBe(expected);
  });

  it('rejects nth_paragraph outside 1..num_paragraphs (upstream would draw a random one)', () => {
    expect(() =>
      check('length_constraints:nth_paragraph_first_word', { num_paragraphs: 2, nth_paragraph: 3, first_word: 'a' }, 'a'),
    ).toThrow(/nth_paragraph/);
    expect(() =>
      check('length_constraints:nth_paragraph_first_word', { num_paragraphs: 2, nth_paragraph: 0, first_word: 'a' }, 'a'),
    ).toThrow(/nth_paragraph/);
  });
});

describe('split_into_sentences', () => {
  it('keeps abbreviations, decimals and sites inside sentences', () => {
    expect(splitIntoSentences('Mr. Smith paid 3.5 dollars at shop.com today. He left! Did he?')).toEqual([
      'Mr. Smith paid 3.5 dollars at shop.com today.',
      'He left!',
      'Did he?',
    ]);
    // Outputs of the reference function under CPython 3.11.
    expect(splitIntoSentences('Wait... what? U.S.A. He said "no." Ph.D. holders J. R. Tolkien Inc. They went.')).toEqual([
      'Wait...',
      'what?',
      'U.S.A.',
      'He said "no".',
      'Ph.D. holders J. R. Tolkien Inc',
      'They went.',
    ]);
    expect(splitIntoSentences('The U.K. It is. Acme Co. However it was...')).toEqual(['The U.K.', 'It is.', 'Acme Co', 'However it was...']);
    // Two dots already make an ellipsis; a last part without a stop is kept.
    expect(splitIntoSentences('Hmm.. ok. Fine')).toEqual(['Hmm..', 'ok.', 'Fine']);
    expect(splitIntoSentences('')).toEqual([]);
  });
});
