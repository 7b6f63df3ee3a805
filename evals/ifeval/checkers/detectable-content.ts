import { requireNonNegative, requireRegex } from '../kwargs-rules.js';
import { pyFindAll, pySearch, pyStrip } from '../python-compat.js';
import { countFinding, explainedChecker } from '../types.js';
import type { CheckerDefinition } from '../types.js';

/** `detectable_content:number_placeholders` (PlaceholderChecker): at least N `[...]` on one line. */
export const numberPlaceholders: CheckerDefinition<{ num_placeholders: 'int' }> = {
  schema: { num_placeholders: 'int' },
  build(args) {
    const min = requireNonNegative('num_placeholders', args.num_placeholders);
    return explainedChecker((value) => {
      const n = pyFindAll('\\[.*?\\]', value).length;
      return countFinding(n >= min, n, 'bracketed placeholders', 'at least', min);
    });
  },
};

const MULTILINE = { multiline: true } as const;

/** `detectable_content:postscript` (PostscriptChecker): a line containing the marker, lowercased. */
export const postscript: CheckerDefinition<{ postscript_marker: 'string' }> = {
  schema: { postscript_marker: 'string' },
  build(args) {
    const marker = pyStrip(args.postscript_marker);
    let pattern: string;
    if (marker === 'P.P.S') pattern = '\\s*p\\.\\s?p\\.\\s?s.*$';
    else if (marker === 'P.S.') pattern = '\\s*p\\.\\s?s\\..*$';
    else pattern = requireRegex('postscript_marker', `\\s*${marker.toLowerCase()}.*$`, MULTILINE);
    return explainedChecker((value) =>
      pySearch(pattern, value.toLowerCase(), MULTILINE)
        ? { pass: true, detail: `a line with ${JSON.stringify(marker)}` }
        : { pass: false, detail: `no line with ${JSON.stringify(marker)}` },
    );
  },
};
