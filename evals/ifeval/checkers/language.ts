import { LANGUAGE_CODES } from '../text/instructions-util.js';
import { LangDetectError } from '../text/text-tools.js';
import type { TextTools } from '../text/text-tools.js';
import { explainedChecker, KwargsError } from '../types.js';
import type { CheckFinding, CheckerDefinition } from '../types.js';

/** `langdetect.detect(value)`, or null for text langdetect cannot classify. */
function detected(value: string, tools: TextTools): string | null {
  try {
    return tools.detectLanguage(value);
  } catch (e) {
    if (e instanceof LangDetectError) return null;
    throw e;
  }
}

function languageName(code: string): string {
  return Object.hasOwn(LANGUAGE_CODES, code) ? `${LANGUAGE_CODES[code]} (${code})` : `language code ${JSON.stringify(code)}`;
}

/**
 * `langdetect.detect(value) == language`, with what was detected; text langdetect cannot classify counts as followed,
 * as upstream.
 */
export function languageFinding(value: string, language: string, tools: TextTools): CheckFinding {
  const code = detected(value, tools);
  if (code === null) return { pass: true, detail: 'no language detectable (counts as followed)' };
  return code === language
    ? { pass: true, detail: `detected ${languageName(code)}` }
    : { pass: false, detail: `detected ${languageName(code)}; needs ${languageName(language)}` };
}

/** `language:response_language` (ResponseLanguageChecker). */
export const responseLanguage: CheckerDefinition<{ language: 'string' }> = {
  schema: { language: 'string' },
  build({ language }) {
    if (!Object.hasOwn(LANGUAGE_CODES, language)) {
      throw new KwargsError(`language ${JSON.stringify(language)} is not one of the reference's LANGUAGE_CODES`);
    }
    return explainedChecker((value, tools) => languageFinding(value, language, tools));
  },
};
