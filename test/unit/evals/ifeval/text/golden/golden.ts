// Reads golden.json (NLTK 3.8 / langdetect 1.0.9 outputs made by make-golden.py) and the shared IFEval texts it
// describes, so each test can compare the TypeScript ports with the Python originals text by text.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root (five folders above this one). */
export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..', '..', '..');
/** The read-only shared test data next to the repository. */
export const SHARED = path.resolve(REPO_ROOT, '..', 'shared');
/** NLTK's English Punkt parameters as plain text. */
export const PUNKT_DIR = path.join(SHARED, 'nltk', 'punkt_english');

/** One text's outputs from the Python originals. */
export type GoldenRow = {
  readonly id: string;
  readonly text: string;
  readonly sentences: number;
  readonly sentSha: string;
  readonly words: number;
  readonly wordSha: string;
  /** detect_langs() as [lang, prob] pairs, or the LangDetectException text. */
  readonly lang: Array<[string, number]> | string;
};

/** sha256 (first 16 hex digits) over the items joined by U+0000, as make-golden.py computes it. */
export function digest(items: readonly string[]): string {
  return createHash('sha256').update(items.join('\u0000'), 'utf8').digest('hex').slice(0, 16);
}

function readJsonl(file: string): Array<Record<string, unknown>> {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** The 1082 golden rows (541 prompts, 541 GPT-4 responses) joined with their texts. */
export function loadGolden(): GoldenRow[] {
  const texts = new Map<string, string>();
  for (const r of readJsonl(path.join(SHARED, 'ifeval', 'input_data.jsonl'))) texts.set(`prompt:${r.key}`, r.prompt as string);
  readJsonl(path.join(SHARED, 'ifeval', 'parity', 'gpt4_responses.jsonl')).forEach((r, i) => {
    if (typeof r.response === 'string') texts.set(`response:${i}`, r.response);
  });
  const golden = JSON.parse(readFileSync(path.join(path.dirname(fileURLToPath(import.meta.url)), 'golden.json'), 'utf8')) as {
    rows: Array<Omit<GoldenRow, 'text'>>;
  };
  return golden.rows.map((row) => {
    const text = texts.get(row.id);
    if (text === undefined) throw new Error(`golden.json: no shared text for ${row.id}`);
    return { ...row, text };
  });
}
