import { pyIsLower, pyIsUpper } from '../python-compat.js';
import type { CheckerDefinition } from '../types.js';
import { compareCount } from './keywords.js';
import { detectedLanguageIs } from './language.js';

/** `change_case:capital_word_frequency` (CapitalWordFrequencyChecker): NLTK word tokens that are `isupper()`. */
export const capitalWordFrequency: CheckerDefinition<{ capital_frequency: 'int'; capital_relation: 'relation' }> = {
  schema: { capital_frequency: 'int', capital_relation: 'relation' },
  build(args) {
    return {
      check: (value, tools) =>
        compareCount(
          tools.wordTokenize(value).filter((w) => pyIsUpper(w)).length,
          args.capital_relation,
          args.capital_frequency,
        ),
    };
  },
};

/** `change_case:english_capital` (CapitalLettersEnglishChecker): `isupper()` and detected as English. */
export const englishCapital: CheckerDefinition<Record<string, never>> = {
  schema: {},
  build() {
    return { check: (value, tools) => pyIsUpper(value) && detectedLanguageIs(value, 'en', tools) };
  },
};

/** `change_case:english_lowercase` (LowercaseLettersEnglishChecker): `islower()` and detected as English. */
export const englishLowercase: CheckerDefinition<Record<string, never>> = {
  schema: {},
  build() {
    return { check: (value, tools) => pyIsLower(value) && detectedLanguageIs(value, 'en', tools) };
  },
};
