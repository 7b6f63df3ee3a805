import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

import yauzl from 'yauzl';

import { writeFileAtomic } from '../../node/atomic-write.js';
import { hashFile } from '../../node/file-hasher.js';
import { checkRegularFile } from '../../node/regular-file.js';
import { dataLayout } from '../data-dir.js';
import { downloadFile } from './download-file.js';
import { PrepError, toPrepError } from './prep-error.js';

/** IFEval's 541 prompts, pinned (google-research instruction_following_eval/data). */
export const IFEVAL_INPUT = {
  file: 'input_data.jsonl',
  size: 207_111,
  sha256: '67ffeee0fcb87c317c5b08a2de85557b4a7e96ada6178aa645b4954fe4b53d49',
  url: 'https://raw.githubusercontent.com/google-research/google-research/master/instruction_following_eval/data/input_data.jsonl',
} as const;

/** NLTK punkt_tab English parameters, pinned per file (sha256 of the files in nltk_data's punkt_tab.zip `english/`). */
export const PUNKT_ENGLISH_FILES: Readonly<Record<string, string>> = {
  'abbrev_types.txt': 'c7baa3c333ea86629a32400663db8cfcc5c6d61a37107ddeac60111b550806cd',
  'collocations.tab': 'ba850bde20b6d640723a51f3e747f0f4f19c98938f1d67d2692a5595c2cc48e3',
  'sent_starters.txt': '9288e8cdec3ce0026b82851a145d0b5c3cfbbe64e1ea6dfa0c41d55f2e53c858',
  'ortho_context.tab': 'b907db07477c8d682c83331ad38b56178e77120c4ff55bb799bf43044e75d305',
};

export const PUNKT_TAB_ZIP_URL = 'https://raw.githubusercontent.com/nltk/nltk_data/gh-pages/packages/tokenizers/punkt_tab.zip';

const MAX_ENTRY_BYTES = 64 << 20;

/** Where each asset lives under the data dir and whether it verifies against its pinned sha256. */
export type EvalAssetsStatus = {
  readonly ifeval: { readonly path: string; readonly ready: boolean };
  readonly punkt: { readonly dir: string; readonly ready: boolean; readonly missing: readonly string[] };
};

export type AssetDownloadOptions = {
  readonly dataDir: string;
  /** Overrides the upstream URL (tests point it at a local server). */
  readonly url?: string;
  readonly signal?: AbortSignal;
  readonly onBytes?: (doneBytes: number, totalBytes: number) => void;
  readonly fetch?: typeof fetch;
  readonly retries?: number;
  readonly backoffMs?: number;
};

const sha256Of = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

async function fileSha256(file: string): Promise<string | undefined> {
  try {
    return (await hashFile(file)).sha256;
  } catch {
    return undefined;
  }
}


/** Checks both assets by sha256 (they are small, so always re-hashed). */
export async function evalAssetsStatus(dataDir: string): Promise<EvalAssetsStatus> {
  const ifevalPath = path.join(dataLayout.ifevalDir(dataDir), IFEVAL_INPUT.file);
  const punktDir = dataLayout.punktDir(dataDir);
  const missing: string[] = [];
  for (const [name, sha] of Object.entries(PUNKT_ENGLISH_FILES)) {
    if ((await fileSha256(path.join(punktDir, name))) !== sha) missing.push(name);
  }
  return {
    ifeval: { path: ifevalPath, ready: (await fileSha256(ifevalPath)) === IFEVAL_INPUT.sha256 },
    punkt: { dir: punktDir, ready: missing.length === 0, missing },
  };
}

/** Far above any pinned asset file (input_data.jsonl is 207 KB, punkt_tab.zip a few MB): refused before reading. */
const MAX_ASSET_FILE_BYTES = 64 * 2 ** 20;

/** A user-given path that is not a file to read (a FIFO, a device, a folder, far too large) is bad input. */
function importError(error: unknown, file: string): PrepError {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'ENOTREGULAR' || code === 'EFBIG') return new PrepError('BAD_INPUT', (error as Error).message, { cause: error });
  return toPrepError(error, file);
}

/** Copies a local `input_data.jsonl` into the data dir after checking its pinned sha256. */
export async function importIfevalData(dataDir: string, source: string): Promise<string> {
  const dest = path.join(dataLayout.ifevalDir(dataDir), IFEVAL_INPUT.file);
  let bytes: Buffer;
  try {
    await checkRegularFile(source, MAX_ASSET_FILE_BYTES);
    bytes = await fs.promises.readFile(source);
  } catch (error) {
    throw importError(error, source);
  }
  const sha = sha256Of(bytes);
  if (sha !== IFEVAL_INPUT.sha256) {
    throw new PrepError('HASH_MISMATCH', `${source}: not the pinned IFEval input_data.jsonl (sha256 ${sha}, expected ${IFEVAL_INPUT.sha256})`);
  }
  try {
    await writeFileAtomic(dest, bytes);
  } catch (error) {
    throw toPrepError(error, dest);
  }
  return dest;
}

/** Downloads IFEval's `input_data.jsonl` (resumable, sha256-checked) unless it is already present and verifies. */
export async function downloadIfevalData(opts: AssetDownloadOptions): Promise<string> {
  const dest = path.join(dataLayout.ifevalDir(opts.dataDir), IFEVAL_INPUT.file);
  if ((await fileSha256(dest)) === IFEVAL_INPUT.sha256) return dest;
  await fs.promises.rm(dest, { force: true });
  await downloadFile({
    url: opts.url ?? IFEVAL_INPUT.url,
    dest,
    label: `IFEval ${IFEVAL_INPUT.file}`,
    expected: { size: IFEVAL_INPUT.size, sha256: IFEVAL_INPUT.sha256 },
    ...pickDownload(opts),
  });
  return dest;
}

function pickDownload(opts: AssetDownloadOptions): Partial<Parameters<typeof downloadFile>[0]> {
  return {
    ...(opts.signal ? { signal: opts.signal } : {}),
    ...(opts.onBytes ? { onBytes: opts.onBytes } : {}),
    ...(opts.fetch ? { fetch: opts.fetch } : {}),
    ...(opts.retries !== undefined ? { retries: opts.retries } : {}),
    ...(opts.backoffMs !== undefined ? { backoffMs: opts.backoffMs } : {}),
  };
}

function readZipEntries(zipPath: string, want: (name: string) => boolean): Promise<Map<string, Buffer>> {
  return new Promise((resolve, reject) => {
    yauzl.open(zipPath, { lazyEntries: true, autoClose: true }, (openError, zip) => {
      if (openError || !zip) return reject(new PrepError('MODEL_INVALID', `${zipPath}: not a readable zip (${openError?.message ?? 'no file'})`));
      const found = new Map<string, Buffer>();
      zip.on('error', (e: Error) => reject(new PrepError('MODEL_INVALID', `${zipPath}: corrupt zip (${e.message})`)));
      zip.on('end', () => resolve(found));
      zip.on('entry', (entry: yauzl.Entry) => {
        if (!want(entry.fileName) || entry.uncompressedSize > MAX_ENTRY_BYTES) return zip.readEntry();
        zip.openReadStream(entry, (streamError, stream) => {
          if (streamError || !stream) return reject(new PrepError('MODEL_INVALID', `${zipPath}: cannot read ${entry.fileName}`));
          const chunks: Buffer[] = [];
          stream.on('data', (c: Buffer) => chunks.push(c));
          stream.on('error', (e: Error) => reject(new PrepError('MODEL_INVALID', `${zipPath}: ${entry.fileName}: ${e.message}`)));
          stream.on('end', () => {
            found.set(entry.fileName, Buffer.concat(chunks));
            zip.readEntry();
          });
        });
      });
      zip.readEntry();
    });
  });
}

/**
 * Imports the four Punkt English files from a folder (holding them directly, or under `english/` or
 * `punkt_tab/english/`) or from NLTK's punkt_tab.zip, checking each pinned sha256 before writing any.
 */
export async function importPunkt(dataDir: string, source: string): Promise<string> {
  const names = Object.keys(PUNKT_ENGLISH_FILES);
  const files = new Map<string, Buffer>();
  let stat: fs.Stats;
  try {
    stat = await fs.promises.stat(source);
  } catch (error) {
    throw toPrepError(error, source);
  }
  if (stat.isDirectory()) {
    const base = [source, path.join(source, 'english'), path.join(source, 'punkt_tab', 'english')].find((d) =>
      names.every((n) => fs.existsSync(path.join(d, n))),
    );
    if (!base) throw new PrepError('NOT_FOUND', `${source}: no folder with the Punkt English files (${names.join(', ')})`);
    for (const n of names) {
      const file = path.join(base, n);
      try {
        await checkRegularFile(file, MAX_ASSET_FILE_BYTES);
        files.set(n, await fs.promises.readFile(file));
      } catch (error) {
        throw importError(error, file);
      }
    }
  } else {
    try {
      await checkRegularFile(source, MAX_ASSET_FILE_BYTES);
    } catch (error) {
      throw importError(error, source);
    }
    // NLTK's punkt_tab.zip keeps them in english/; a zip of the folder itself has them at its top or in one folder.
    // Any one folder holding all four will do (each file is checked against its pinned sha256 below).
    const entries = await readZipEntries(source, (name) => names.includes(path.posix.basename(name)));
    const folders = new Map<string, Map<string, Buffer>>();
    for (const [name, bytes] of entries) {
      const folder = path.posix.dirname(name);
      if (!folders.has(folder)) folders.set(folder, new Map());
      folders.get(folder)!.set(path.posix.basename(name), bytes);
    }
    const complete = [...folders.entries()].filter(([, f]) => names.every((n) => f.has(n)));
    const chosen =
      complete.find(([folder]) => folder === 'english' || folder.endsWith('/english')) ??
      complete.sort(([a], [b]) => a.length - b.length)[0];
    if (!chosen) {
      throw new PrepError('NOT_FOUND', `${source}: the zip has no folder holding all of the Punkt English files (${names.join(', ')})`);
    }
    for (const [n, bytes] of chosen[1]) files.set(n, bytes);
  }
  for (const [n, bytes] of files) {
    const sha = sha256Of(bytes);
    if (sha !== PUNKT_ENGLISH_FILES[n]) {
      throw new PrepError('HASH_MISMATCH', `${source}: english/${n} is not the pinned Punkt file (sha256 ${sha}, expected ${PUNKT_ENGLISH_FILES[n]})`);
    }
  }
  const dir = dataLayout.punktDir(dataDir);
  try {
    for (const [n, bytes] of files) await writeFileAtomic(path.join(dir, n), bytes);
  } catch (error) {
    throw toPrepError(error, dir);
  }
  return dir;
}

/** Downloads NLTK's punkt_tab.zip and imports its English files, unless they are already present and verify. */
export async function downloadPunkt(opts: AssetDownloadOptions): Promise<string> {
  if ((await evalAssetsStatus(opts.dataDir)).punkt.ready) return dataLayout.punktDir(opts.dataDir);
  const zipPath = path.join(path.dirname(dataLayout.punktDir(opts.dataDir)), 'punkt_tab.zip');
  await downloadFile({ url: opts.url ?? PUNKT_TAB_ZIP_URL, dest: zipPath, label: 'NLTK punkt_tab.zip', expected: {}, ...pickDownload(opts) });
  try {
    return await importPunkt(opts.dataDir, zipPath);
  } finally {
    await fs.promises.rm(zipPath, { force: true });
  }
}
