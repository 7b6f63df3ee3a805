import { countFinding, explainedChecker } from '../types.js';
import type { CheckerDefinition } from '../types.js';

/** `punctuation:no_comma` (CommaChecker): no ASCII comma anywhere. */
export const noComma: CheckerDefinition<Record<string, never>> = {
  schema: {},
  build() {
    return explainedChecker((value) => {
      const n = value.split(',').length - 1;
      return countFinding(n === 0, n, 'commas', 'exactly', 0);
    });
  },
};
