import { LANGUAGE_CODES } from '../text/instructions-util.js';
import { LangDetectError } from '../text/text-tools.js';
import type { TextTools } from '../text/text-tools.js';
import { KwargsError } from '../types.js';
import type { CheckerDefinition } from '../types.js';

/** `langdetect.detect(value) == language`; text langdetect cannot classify counts as followed, as upstream. */
export function detectedLanguageIs(value: string, language: string, tools: TextTools): boolean {
  try {
    return tools.detectLanguage(value) === language;
  } catch (e) {
    if (e instanceof LangDetectError) return true;
    throw e;
  }
}

/** `language:response_language` (ResponseLanguageChecker). */
export const responseLanguage: CheckerDefinition<{ language: 'string' }> = {
  schema: { language: 'string' },
  build({ language }) {
    if (!Object.hasOwn(LANGUAGE_CODES, language)) {
      throw new KwargsError(`language ${JSON.stringify(language)} is not one of the reference's LANGUAGE_CODES`);
    }
    return { check: (value, tools) => detectedLanguageIs(value, language, tools) };
  },
};
