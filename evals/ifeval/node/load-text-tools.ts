import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';

import { validateLangdetectData, validateLangProfile } from '../text/langdetect/langdetect-data.js';
import type { LangdetectData, LangProfile } from '../text/langdetect/langdetect-data.js';
import { LanguageDetector } from '../text/langdetect/language-detector.js';
import { parsePunktParameters } from '../text/punkt-parameters.js';
import { PunktSentenceTokenizer } from '../text/punkt-sentence-tokenizer.js';
import type { TextTools } from '../text/text-tools.js';
import { wordTokenize } from '../text/word-tokenize.js';

/** Where the Punkt parameters (and optionally the langdetect profiles) are read from. */
export type LoadTextToolsOptions = {
  /** Folder with abbrev_types.txt, collocations.tab, sent_starters.txt and ortho_context.tab (shared/nltk/punkt_english). */
  readonly punktDir: string;
  /** Folder of Python langdetect profile files (langdetect/profiles); defaults to the 55 bundled with the repository. */
  readonly profilesDir?: string;
  /** The langdetect data file (messages + profiles); defaults to LANGDETECT_DATA_FILE (set it where a build moves it). */
  readonly langdetectDataFile?: string;
};

async function readText(dir: string, name: string): Promise<string> {
  const file = path.join(dir, name);
  try {
    return await readFile(file, 'utf8');
  } catch (err) {
    throw new Error(`${file}: cannot read the Punkt parameter file (${(err as Error).message})`, { cause: err });
  }
}

/** The bundled langdetect data: Python langdetect 1.0.9's messages and profiles (see evals/ifeval/README.md). */
export const LANGDETECT_DATA_FILE = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '..',
  'text',
  'langdetect',
  'langdetect-data.json.gz',
);

/** Reads the langdetect data file (gzipped JSON), with its profiles replaced by those in `profilesDir` when given. */
export async function loadLangdetectData(profilesDir?: string, dataFile = LANGDETECT_DATA_FILE): Promise<LangdetectData> {
  let data: LangdetectData;
  try {
    data = validateLangdetectData(JSON.parse(gunzipSync(await readFile(dataFile)).toString('utf8')), dataFile);
  } catch (err) {
    throw new Error(`${dataFile}: cannot load langdetect data (${(err as Error).message})`, { cause: err });
  }
  if (profilesDir === undefined) return data;
  const profiles: LangProfile[] = [];
  // Python lists the folder with os.listdir (file-system order); sorted names keep runs reproducible.
  for (const name of (await readdir(profilesDir)).sort()) {
    const file = path.join(profilesDir, name);
    if (name.startsWith('.') || !(await stat(file)).isFile()) continue;
    profiles.push(validateLangProfile(JSON.parse(await readFile(file, 'utf8')), file));
  }
  if (profiles.length < 2) throw new Error(`${profilesDir}: need at least 2 langdetect profiles, found ${profiles.length}`);
  return { ...data, source: profilesDir, profiles };
}

/** Reads the Punkt English parameters and language profiles, and returns the text tools the IFEval checkers use. */
export async function loadTextTools(opts: LoadTextToolsOptions): Promise<TextTools> {
  // Read in parallel, but report the first failure in this fixed order, not whichever read failed first.
  const settled = await Promise.allSettled([
    readText(opts.punktDir, 'abbrev_types.txt'),
    readText(opts.punktDir, 'collocations.tab'),
    readText(opts.punktDir, 'sent_starters.txt'),
    readText(opts.punktDir, 'ortho_context.tab'),
  ] as const);
  const [abbrevTypes, collocations, sentStarters, orthoContext] = settled.map((r) => {
    if (r.status === 'rejected') throw r.reason;
    return r.value;
  }) as [string, string, string, string];
  const langdetect = await loadLangdetectData(opts.profilesDir, opts.langdetectDataFile);
  const detector = new LanguageDetector(langdetect);
  const punkt = new PunktSentenceTokenizer(parsePunktParameters({ abbrevTypes, collocations, sentStarters, orthoContext }));
  const sentTokenize = (text: string): string[] => punkt.tokenize(text);
  return {
    sentTokenize,
    wordTokenize: (text) => wordTokenize(text, sentTokenize),
    detectLanguage: (text) => detector.detect(text),
  };
}
