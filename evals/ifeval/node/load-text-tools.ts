import { readFile } from 'node:fs/promises';
import path from 'node:path';

import { parsePunktParameters } from '../text/punkt-parameters.js';
import { PunktSentenceTokenizer } from '../text/punkt-sentence-tokenizer.js';
import type { TextTools } from '../text/text-tools.js';
import { wordTokenize } from '../text/word-tokenize.js';

/** Where the Punkt parameters (and optionally the langdetect profiles) are read from. */
export type LoadTextToolsOptions = {
  /** Folder with abbrev_types.txt, collocations.tab, sent_starters.txt and ortho_context.tab (shared/nltk/punkt_english). */
  readonly punktDir: string;
  /** Folder of Python langdetect profile JSON files; defaults to the profiles bundled in the repository. */
  readonly profilesDir?: string;
};

async function readText(dir: string, name: string): Promise<string> {
  const file = path.join(dir, name);
  try {
    return await readFile(file, 'utf8');
  } catch (err) {
    throw new Error(`${file}: cannot read the Punkt parameter file (${(err as Error).message})`, { cause: err });
  }
}

/** Reads the Punkt English parameters and language profiles, and returns the text tools the IFEval checkers use. */
export async function loadTextTools(opts: LoadTextToolsOptions): Promise<TextTools> {
  const [abbrevTypes, collocations, sentStarters, orthoContext] = await Promise.all([
    readText(opts.punktDir, 'abbrev_types.txt'),
    readText(opts.punktDir, 'collocations.tab'),
    readText(opts.punktDir, 'sent_starters.txt'),
    readText(opts.punktDir, 'ortho_context.tab'),
  ]);
  const punkt = new PunktSentenceTokenizer(parsePunktParameters({ abbrevTypes, collocations, sentStarters, orthoContext }));
  const sentTokenize = (text: string): string[] => punkt.tokenize(text);
  return {
    sentTokenize,
    wordTokenize: (text) => wordTokenize(text, sentTokenize),
    detectLanguage: () => {
      throw new Error('load-text-tools.ts: langdetect is not ported yet');
    },
  };
}
