import type { CheckerDefinition } from '../types.js';

/** `punctuation:no_comma` (CommaChecker): no ASCII comma anywhere. */
export const noComma: CheckerDefinition<Record<string, never>> = {
  schema: {},
  build() {
    return { check: (value) => !value.includes(',') };
  },
};
