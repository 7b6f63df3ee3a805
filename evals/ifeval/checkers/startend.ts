import { pyLen, pyStrip } from '../python-compat.js';
import type { CheckerDefinition } from '../types.js';

/** `startend:end_checker` (EndChecker): ends with the phrase, ignoring case, outer quotes and whitespace. */
export const endChecker: CheckerDefinition<{ end_phrase: 'string' }> = {
  schema: { end_phrase: 'string' },
  build(args) {
    const phrase = pyStrip(pyStrip(args.end_phrase)).toLowerCase();
    return { check: (value) => pyStrip(pyStrip(value), '"').toLowerCase().endsWith(phrase) };
  },
};

/** `startend:quotation` (QuotationChecker): wrapped in double quotation marks. */
export const quotation: CheckerDefinition<Record<string, never>> = {
  schema: {},
  build() {
    return {
      check: (value) => {
        const v = pyStrip(value);
        return pyLen(v) > 1 && v.startsWith('"') && v.endsWith('"');
      },
    };
  },
};
