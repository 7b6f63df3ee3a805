import { requireNonNegative } from '../kwargs-rules.js';
import { pyLStrip, pySplit, pySplitWhitespace, pyStrip } from '../python-compat.js';
import { countSentences, countWords } from '../text/instructions-util.js';
import { KwargsError } from '../types.js';
import type { CheckerDefinition } from '../types.js';
import { compareCount } from './keywords.js';

/** `length_constraints:number_sentences` (NumberOfSentences): Punkt sentence count. */
export const numberSentences: CheckerDefinition<{ num_sentences: 'int'; relation: 'relation' }> = {
  schema: { num_sentences: 'int', relation: 'relation' },
  build(args) {
    const threshold = requireNonNegative('num_sentences', args.num_sentences);
    return { check: (value, tools) => compareCount(countSentences(value, tools), args.relation, threshold) };
  },
};

/** `length_constraints:number_paragraphs` (ParagraphChecker): exactly N parts between `***` dividers. */
export const numberParagraphs: CheckerDefinition<{ num_paragraphs: 'int' }> = {
  schema: { num_paragraphs: 'int' },
  build(args) {
    const expected = requireNonNegative('num_paragraphs', args.num_paragraphs);
    return {
      check: (value) => {
        const paragraphs = pySplit('\\s?\\*\\*\\*\\s?', value);
        let n = paragraphs.length;
        for (let i = 0; i < paragraphs.length; i++) {
          if (!pyStrip(paragraphs[i]!)) {
            if (i === 0 || i === paragraphs.length - 1) n--;
            else return false;
          }
        }
        return n === expected;
      },
    };
  },
};

/** `length_constraints:number_words` (NumberOfWords): `\w+` token count. */
export const numberWords: CheckerDefinition<{ num_words: 'int'; relation: 'relation' }> = {
  schema: { num_words: 'int', relation: 'relation' },
  build(args) {
    const threshold = requireNonNegative('num_words', args.num_words);
    return { check: (value) => compareCount(countWords(value), args.relation, threshold) };
  },
};

const FIRST_WORD_STOP = new Set(['.', ',', '?', '!', "'", '"']);

/** `length_constraints:nth_paragraph_first_word` (ParagraphFirstWordCheck): paragraphs split on "\n\n". */
export const nthParagraphFirstWord: CheckerDefinition<{
  num_paragraphs: 'int';
  nth_paragraph: 'int';
  first_word: 'string';
}> = {
  schema: { num_paragraphs: 'int', nth_paragraph: 'int', first_word: 'string' },
  build(args) {
    const expected = requireNonNegative('num_paragraphs', args.num_paragraphs);
    const nth = args.nth_paragraph;
    if (nth <= 0 || nth > expected) {
      throw new KwargsError(`nth_paragraph must be in 1..num_paragraphs (${expected}), got ${nth}`);
    }
    const wanted = args.first_word.toLowerCase();
    return {
      check: (value) => {
        const paragraphs = value.split('\n\n');
        let n = paragraphs.length;
        for (const p of paragraphs) if (!pyStrip(p)) n--;
        if (nth > n) return false;
        const paragraph = pyStrip(paragraphs[nth - 1]!);
        if (!paragraph) return false;
        let word = pyStrip(pySplitWhitespace(paragraph)[0]!);
        word = pyLStrip(pyLStrip(word, "'"), '"');
        let first = '';
        for (const ch of word) {
          if (FIRST_WORD_STOP.has(ch)) break;
          first += ch.toLowerCase();
        }
        return n === expected && first === wanted;
      },
    };
  },
};
