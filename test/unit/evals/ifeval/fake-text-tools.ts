import { LangDetectError } from '../../../../evals/ifeval/text/text-tools.js';
import type { TextTools } from '../../../../evals/ifeval/text/text-tools.js';

/**
 * A stand-in for the NLTK/langdetect ports in checker tests: sentences end at . ! ? before whitespace or the end,
 * words are whitespace-separated with trailing punctuation split off, and the language is fixed per instance
 * (LangDetectError for text without letters, as langdetect raises "No features in text.").
 */
export function fakeTextTools(language = 'en'): TextTools & { readonly detected: string[] } {
  const detected: string[] = [];
  return {
    detected,
    sentTokenize: (text) => text.split(/(?<=[.!?])\s+/u).map((s) => s.trim()).filter(Boolean),
    wordTokenize: (text) =>
      text
        .split(/\s+/u)
        .filter(Boolean)
        .flatMap((w) => {
          const m = /^(.*?)([.,!?;:]*)$/u.exec(w)!;
          return [m[1]!, ...Array.from(m[2]!)].filter(Boolean);
        }),
    detectLanguage: (text) => {
      detected.push(text);
      if (!/\p{L}/u.test(text)) throw new LangDetectError('No features in text.');
      return language;
    },
  };
}
