import { requireNonEmpty, requireNonNegative, requireRegex } from '../kwargs-rules.js';
import { pyFindAll, pyIsSpace, pyLen, pySearch, pyStrip } from '../python-compat.js';
import { explainedChecker, KwargsError, quoteList } from '../types.js';
import type { CheckFinding, CheckerDefinition, Relation } from '../types.js';

const IGNORE_CASE = { ignoreCase: true } as const;

/** Compares a count with a threshold the way the reference's `_COMPARISON_RELATION` does. */
export function compareCount(actual: number, relation: Relation, threshold: number): boolean {
  return relation === 'less than' ? actual < threshold : actual >= threshold;
}

function appearsFinding(pass: boolean, what: string, n: number, relation: Relation, threshold: number): CheckFinding {
  return { pass, detail: `${JSON.stringify(what)} appears ${n} time${n === 1 ? '' : 's'}; needs ${relation} ${threshold}` };
}

/** `keywords:existence` (KeywordChecker): every keyword, as a regex, is found ignoring case. */
export const existence: CheckerDefinition<{ keywords: 'string[]' }> = {
  schema: { keywords: 'string[]' },
  build({ keywords }) {
    requireNonEmpty('keywords', keywords);
    for (const k of keywords) requireRegex('keyword', k, IGNORE_CASE);
    return explainedChecker((value) => {
      const missing = keywords.filter((k) => !pySearch(k, value, IGNORE_CASE));
      return missing.length === 0
        ? { pass: true, detail: `every keyword found (${quoteList(keywords)})` }
        : { pass: false, detail: `missing ${quoteList(missing)}` };
    });
  },
};

/** `keywords:frequency` (KeywordFrequencyChecker): occurrences of the keyword regex, ignoring case. */
export const frequency: CheckerDefinition<{ keyword: 'string'; frequency: 'int'; relation: 'relation' }> = {
  schema: { keyword: 'string', frequency: 'int', relation: 'relation' },
  build(args) {
    const keyword = requireRegex('keyword', pyStrip(requireNonEmpty('keyword', args.keyword)), IGNORE_CASE);
    const threshold = requireNonNegative('frequency', args.frequency);
    return explainedChecker((value) => {
      const n = pyFindAll(keyword, value, IGNORE_CASE).length;
      return appearsFinding(compareCount(n, args.relation, threshold), keyword, n, args.relation, threshold);
    });
  },
};

/** `keywords:forbidden_words` (ForbiddenWords): no `\bword\b` match, ignoring case. */
export const forbiddenWords: CheckerDefinition<{ forbidden_words: 'string[]' }> = {
  schema: { forbidden_words: 'string[]' },
  build({ forbidden_words }) {
    requireNonEmpty('forbidden_words', forbidden_words);
    const words = [...new Set(forbidden_words)];
    const patterns = words.map((w) => requireRegex('forbidden word', `\\b${w}\\b`, IGNORE_CASE));
    return explainedChecker((value) => {
      const found = words.filter((_, i) => pySearch(patterns[i]!, value, IGNORE_CASE));
      return found.length === 0
        ? { pass: true, detail: 'none of the forbidden words' }
        : { pass: false, detail: `contains ${quoteList(found)}` };
    });
  },
};

/** `keywords:letter_frequency` (LetterFrequencyChecker): occurrences of one character in the lowercased response. */
export const letterFrequency: CheckerDefinition<{ letter: 'string'; let_frequency: 'int'; let_relation: 'relation' }> = {
  schema: { letter: 'string', let_frequency: 'int', let_relation: 'relation' },
  build(args) {
    // Upstream draws a random letter for an empty or longer one, and rejects whitespace in its newest version.
    if (pyLen(args.letter) !== 1 || pyIsSpace(args.letter)) {
      throw new KwargsError(`letter must be a single non-whitespace character, got ${JSON.stringify(args.letter)}`);
    }
    const letter = args.letter.toLowerCase();
    const threshold = requireNonNegative('let_frequency', args.let_frequency);
    return explainedChecker((value) => {
      let n = 0;
      for (const ch of value.toLowerCase()) if (ch === letter) n++;
      return appearsFinding(compareCount(n, args.let_relation, threshold), letter, n, args.let_relation, threshold);
    });
  },
};
