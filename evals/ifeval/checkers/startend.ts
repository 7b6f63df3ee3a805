import { pyLen, pyStrip } from '../python-compat.js';
import { explainedChecker } from '../types.js';
import type { CheckerDefinition } from '../types.js';

/** The last `n` characters (code points) of `s`, with "…" before them when cut. */
function tail(s: string, n: number): string {
  const chars = [...s];
  return chars.length > n ? `…${chars.slice(-n).join('')}` : s;
}

/** `startend:end_checker` (EndChecker): ends with the phrase, ignoring case, outer quotes and whitespace. */
export const endChecker: CheckerDefinition<{ end_phrase: 'string' }> = {
  schema: { end_phrase: 'string' },
  build(args) {
    const phrase = pyStrip(pyStrip(args.end_phrase)).toLowerCase();
    return explainedChecker((value) => {
      const text = pyStrip(pyStrip(value), '"').toLowerCase();
      return text.endsWith(phrase)
        ? { pass: true, detail: `ends with ${JSON.stringify(phrase)}` }
        : { pass: false, detail: `ends with ${JSON.stringify(tail(text, Math.max(pyLen(phrase), 12)))}; needs ${JSON.stringify(phrase)}` };
    });
  },
};

/** `startend:quotation` (QuotationChecker): wrapped in double quotation marks. */
export const quotation: CheckerDefinition<Record<string, never>> = {
  schema: {},
  build() {
    return explainedChecker((value) => {
      const v = pyStrip(value);
      if (pyLen(v) > 1 && v.startsWith('"') && v.endsWith('"')) return { pass: true, detail: 'wrapped in double quotation marks' };
      const ends = [v.startsWith('"') ? null : 'start', v.endsWith('"') ? null : 'end'].filter(Boolean).join(' and ');
      return { pass: false, detail: ends ? `no double quotation mark at its ${ends}` : 'a lone quotation mark' };
    });
  },
};
