import { requireNonNegative } from '../kwargs-rules.js';
import { pyLStrip, pySplit, pySplitWhitespace, pyStrip } from '../python-compat.js';
import { countSentences, countWords } from '../text/instructions-util.js';
import { countFinding, explainedChecker, KwargsError } from '../types.js';
import type { CheckerDefinition } from '../types.js';
import { compareCount } from './keywords.js';

/** `length_constraints:number_sentences` (NumberOfSentences): Punkt sentence count. */
export const numberSentences: CheckerDefinition<{ num_sentences: 'int'; relation: 'relation' }> = {
  schema: { num_sentences: 'int', relation: 'relation' },
  build(args) {
    const threshold = requireNonNegative('num_sentences', args.num_sentences);
    return explainedChecker((value, tools) => {
      const n = countSentences(value, tools);
      return countFinding(compareCount(n, args.relation, threshold), n, 'sentences', args.relation, threshold);
    });
  },
};

/** `length_constraints:number_paragraphs` (ParagraphChecker): exactly N parts between `***` dividers. */
export const numberParagraphs: CheckerDefinition<{ num_paragraphs: 'int' }> = {
  schema: { num_paragraphs: 'int' },
  build(args) {
    const expected = requireNonNegative('num_paragraphs', args.num_paragraphs);
    return explainedChecker((value) => {
      const paragraphs = pySplit('\\s?\\*\\*\\*\\s?', value);
      let n = paragraphs.length;
      for (let i = 0; i < paragraphs.length; i++) {
        if (!pyStrip(paragraphs[i]!)) {
          if (i === 0 || i === paragraphs.length - 1) n--;
          else return { pass: false, detail: `paragraph ${i + 1} between *** dividers is empty` };
        }
      }
      return countFinding(n === expected, n, 'paragraphs', 'exactly', expected);
    });
  },
};

/** `length_constraints:number_words` (NumberOfWords): `\w+` token count. */
export const numberWords: CheckerDefinition<{ num_words: 'int'; relation: 'relation' }> = {
  schema: { num_words: 'int', relation: 'relation' },
  build(args) {
    const threshold = requireNonNegative('num_words', args.num_words);
    return explainedChecker((value) => {
      const n = countWords(value);
      return countFinding(compareCount(n, args.relation, threshold), n, 'words', args.relation, threshold);
    });
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
    return explainedChecker((value) => {
      const paragraphs = value.split('\n\n');
      let n = paragraphs.length;
      for (const p of paragraphs) if (!pyStrip(p)) n--;
      const count = `${n} paragraph${n === 1 ? '' : 's'} (needs ${expected})`;
      if (nth > n) return { pass: false, detail: `${count}; no paragraph ${nth}` };
      // Upstream takes the nth piece of the split, blank pieces included, while the count leaves them out.
      const paragraph = pyStrip(paragraphs[nth - 1]!);
      if (!paragraph) return { pass: false, detail: `${count}; piece ${nth} of the split on blank lines is blank` };
      let word = pyStrip(pySplitWhitespace(paragraph)[0]!);
      word = pyLStrip(pyLStrip(word, "'"), '"');
      let first = '';
      for (const ch of word) {
        if (FIRST_WORD_STOP.has(ch)) break;
        first += ch.toLowerCase();
      }
      return {
        pass: n === expected && first === wanted,
        detail: `${count}; paragraph ${nth} starts with ${JSON.stringify(first)} (needs ${JSON.stringify(wanted)})`,
      };
    });
  },
};
