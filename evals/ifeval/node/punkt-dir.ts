import { existsSync } from 'node:fs';
import path from 'node:path';

/** Files a Punkt parameter folder must hold (shared/nltk/punkt_english). */
const PUNKT_FILES = ['abbrev_types.txt', 'collocations.tab', 'sent_starters.txt', 'ortho_context.tab'];

/**
 * The Punkt English parameter folder: `explicit` when given, else `<repoRoot>/../shared/nltk/punkt_english` when
 * present, else `dataCopy`: the copy `horizon assets` keeps in the data folder (the caller knows its layout). Throws
 * an error naming every place looked at when the folder or one of its files is missing.
 */
export function resolvePunktDir(opts: { readonly repoRoot: string; readonly explicit?: string; readonly dataCopy?: string }): string {
  const candidates = opts.explicit
    ? [path.resolve(opts.explicit)]
    : [
        path.resolve(opts.repoRoot, '..', 'shared', 'nltk', 'punkt_english'),
        ...(opts.dataCopy ? [path.resolve(opts.dataCopy)] : []),
      ];
  for (const dir of candidates) {
    if (PUNKT_FILES.every((f) => existsSync(path.join(dir, f)))) return dir;
  }
  throw new Error(
    `Punkt English parameters not found (looked in ${candidates.join(', ')}): a folder with ${PUNKT_FILES.join(', ')} is ` +
      'needed; pass --punkt DIR or import it with horizon assets --import-punkt',
  );
}
