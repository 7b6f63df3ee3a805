import { pyIsLower, pyIsUpper } from '../python-compat.js';
import type { TextTools } from '../text/text-tools.js';
import { countFinding, explainedChecker } from '../types.js';
import type { CheckFinding, CheckerDefinition } from '../types.js';
import { compareCount } from './keywords.js';
import { languageFinding } from './language.js';

/** `change_case:capital_word_frequency` (CapitalWordFrequencyChecker): NLTK word tokens that are `isupper()`. */
export const capitalWordFrequency: CheckerDefinition<{ capital_frequency: 'int'; capital_relation: 'relation' }> = {
  schema: { capital_frequency: 'int', capital_relation: 'relation' },
  build(args) {
    return explainedChecker((value, tools) => {
      const n = tools.wordTokenize(value).filter((w) => pyIsUpper(w)).length;
      return countFinding(compareCount(n, args.capital_relation, args.capital_frequency), n, 'all-capital words', args.capital_relation, args.capital_frequency);
    });
  },
};

/**
 * `isCase(value)` and detected as English; when the case test fails, the first letter that fails it (language
 * detection runs only after the case test passes, as upstream's `and` does).
 */
function caseAndEnglish(
  value: string,
  tools: TextTools,
  isCase: (s: string) => boolean,
  want: string,
  other: string,
): CheckFinding {
  if (!isCase(value)) {
    const first = [...value].find((ch) => ch.toLowerCase() !== ch.toUpperCase() && !isCase(ch));
    return { pass: false, detail: first === undefined ? 'no letters' : `has ${other} letters (first: ${JSON.stringify(first)})` };
  }
  const language = languageFinding(value, 'en', tools);
  return { pass: language.pass, detail: `all ${want}; ${language.detail}` };
}

/** `change_case:english_capital` (CapitalLettersEnglishChecker): `isupper()` and detected as English. */
export const englishCapital: CheckerDefinition<Record<string, never>> = {
  schema: {},
  build() {
    return explainedChecker((value, tools) => caseAndEnglish(value, tools, pyIsUpper, 'capitals', 'lowercase'));
  },
};

/** `change_case:english_lowercase` (LowercaseLettersEnglishChecker): `islower()` and detected as English. */
export const englishLowercase: CheckerDefinition<Record<string, never>> = {
  schema: {},
  build() {
    return explainedChecker((value, tools) => caseAndEnglish(value, tools, pyIsLower, 'lowercase', 'capital'));
  },
};
