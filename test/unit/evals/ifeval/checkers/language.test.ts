// Rows from instructions_test.py (test_response_language, test_response_multilanguage) with a fake detector;
// langdetect's own behaviour is tested with its port. To add a case: append [response, language, detected, expected].
import { describe, expect, it } from 'vitest';

import { fakeTextTools } from '../fake-text-tools.js';
import { check } from './check-helper.js';

describe('language:response_language', () => {
  it.each([
    ['The response is English', 'en', 'en', true],
    ["Desayunamos en McDonald's hoy", 'es', 'es', true],
    ['Today we visit the Louvre', 'en', 'en', true],
    ['Bonjour tout le monde', 'en', 'fr', false],
    // langdetect raises "No features in text." -> counted as followed, as upstream does.
    ['1234 5678', 'de', 'en', true],
  ])('%j as %s (detected %s) -> %s', (response, language, detected, expected) => {
    expect(check('language:response_language', { language }, response, fakeTextTools(detected))).toBe(expected);
  });

  it('rejects a language outside LANGUAGE_CODES', () => {
    expect(() => check('language:response_language', { language: 'xx' }, 'x')).toThrow(/LANGUAGE_CODES/);
  });

  it('propagates errors other than LangDetectError', () => {
    const tools = {
      ...fakeTextTools(),
      detectLanguage: (): string => {
        throw new Error('profiles missing');
      },
    };
    expect(() => check('language:response_language', { language: 'en' }, 'Hello there', tools)).toThrow(/profiles missing/);
  });
});
