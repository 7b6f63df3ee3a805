/**
 * The NLTK and langdetect behaviour the IFEval checkers depend on, bundled so the pure scorer can be given
 * them by whoever loads the data (evals/ifeval/node/ reads the Punkt parameters and language profiles from disk).
 */
export interface TextTools {
  /** `nltk.sent_tokenize(text)`: Punkt English sentence splitting, same output as NLTK 3.8. */
  sentTokenize(text: string): string[];
  /** `nltk.word_tokenize(text)`: Punkt sentences, then the NLTK (improved Treebank) word tokenizer. */
  wordTokenize(text: string): string[];
  /** `langdetect.detect(text)` (Python langdetect 1.0.9, seeded); throws LangDetectError for text without features. */
  detectLanguage(text: string): string;
}

/** Raised where Python langdetect raises LangDetectException ("No features in text."). */
export class LangDetectError extends Error {
  override name = 'LangDetectError';
}
