import { stat } from 'node:fs/promises';

import type Database from 'better-sqlite3';

import type { ZipOrigin } from '../../common/ipc-contract.js';
import { isRecord } from '../../common/is-record.js';
import { CAMPAIGN_ID_PREFIX } from '../../common/perf-campaign.js';
import { LABEL_MAX, labelRefusal } from '../../common/label.js';
import { FileHasher } from '../../node/file-hasher.js';
import { readZipEntries } from './verify-result-zip.js';

/** Why a ZIP was not imported; the message names the file and every problem found. */
export class ImportError extends Error {
  constructor(
    readonly file: string,
    readonly reason: 'not-verified' | 'other-kind' | 'malformed' | 'duplicate',
    message: string,
  ) {
    super(`${file}: ${message}`);
    this.name = 'ImportError';
  }
}

/**
 * Reads a ZIP's entries and hashes the whole file. Entries first: reading refuses a path that is not a regular file
 * (a FIFO would block the hash's read for good).
 */
export async function readZipToImport(file: string, now: string): Promise<{ entries: Map<string, Buffer>; origin: ZipOrigin }> {
  const entries = await readZipEntries(file);
  const hasher = new FileHasher();
  await hasher.updateFromFile(file);
  const digest = hasher.digest();
  if ((await stat(file)).size !== digest.size) {
    throw new ImportError(file, 'malformed', 'the file changed while it was being read; import it again');
  }
  return { entries, origin: { file, sha256: digest.sha256, importedAt: now } };
}

/** Stored ids name files in exports/: letters, digits and . _ + - only, as runs and campaigns are named here. */
export const isStoredId = (v: unknown): v is string => typeof v === 'string' && /^(?!.*\.\.)[A-Za-z0-9][\w.+-]{0,127}$/.test(v);
const CAMPAIGN = CAMPAIGN_ID_PREFIX;
export const isRunId = (v: unknown): v is string => isStoredId(v) && !v.startsWith(CAMPAIGN);
export const RUN_ID = `a run id (letters, digits, . _ + -; not starting with ${CAMPAIGN}, which names campaigns)`;
export const isCampaignId = (v: unknown): v is string => isStoredId(v) && v.startsWith(CAMPAIGN);
export const CAMPAIGN_ID = `a campaign id (${CAMPAIGN} then letters, digits, . _ + -)`;
/** A ZIP's optional label: absent, or one the app would store (label.ts). */
export const isOptionalLabel = (v: unknown): v is string | undefined => v === undefined || (typeof v === 'string' && labelRefusal(v) === null);
export const OPTIONAL_LABEL = `a label (one line of at most ${LABEL_MAX} characters) or absent`;
export const isPositive = (v: unknown): v is number => Number.isInteger(v) && (v as number) >= 1;
export const isTime = (v: unknown): v is string => typeof v === 'string' && !Number.isNaN(Date.parse(v));
export const isString = (v: unknown): v is string => typeof v === 'string';
export const isNonEmpty = (v: unknown): v is string => typeof v === 'string' && v.length > 0;
export const oneOf =
  <T extends string>(values: readonly T[]) =>
  (v: unknown): v is T =>
    typeof v === 'string' && (values as readonly string[]).includes(v);

/** A value as a message quotes it: JSON, cut at 60 characters. */
export const brief = (v: unknown): string => (v === undefined ? 'missing' : JSON.stringify(v)?.slice(0, 60) ?? String(v));

/** Reads fields off a JSON file's objects by dotted path, noting each one that is missing or of the wrong kind. */
export class Fields {
  readonly problems: string[] = [];

  constructor(private readonly file: string) {}

  get<T>(obj: unknown, at: string, ok: (v: unknown) => v is T, what: string): T | undefined {
    let v: unknown = obj;
    for (const k of at.split('.')) v = isRecord(v) ? v[k] : undefined;
    if (ok(v)) return v;
    this.problems.push(`${this.file} ${at} is ${brief(v)}, not ${what}`);
    return undefined;
  }
}

/** The refusal of a ZIP that does not verify, with its count of problems and the first. */
export function notVerified(file: string, problems: readonly string[]): ImportError {
  const n = problems.length;
  return new ImportError(file, 'not-verified', `does not verify, so it is not imported (${n} problem${n === 1 ? '' : 's'}${n > 0 ? `; the first: ${problems[0]}` : ''})`);
}

/** Throws the problems found, the first five named, as one ImportError. */
export function refuseProblems(file: string, problems: readonly string[], what: string): void {
  if (problems.length === 0) return;
  const shown = problems.slice(0, 5).join('; ');
  throw new ImportError(file, 'malformed', `verifies, but its ${what} cannot be stored: ${shown}${problems.length > 5 ? `; and ${problems.length - 5} more` : ''}`);
}

/**
 * Stores what an import read in one write transaction, after refusing an id stored already (saying where that one
 * came from): `what` names the kind ('run', 'campaign'), `here` how one made on this machine came to be.
 */
export function storeOnce<T>(
  db: Database.Database,
  file: string,
  item: { readonly what: string; readonly id: string; readonly here: string },
  existing: () => { readonly imported: ZipOrigin | null } | undefined,
  store: () => T,
): T {
  return db
    .transaction(() => {
      const found = existing();
      if (found) {
        const where = found.imported ? `, imported from ${found.imported.file} at ${found.imported.importedAt}` : `: it was ${item.here}`;
        throw new ImportError(file, 'duplicate', `${item.what} ${item.id} is stored already${where}`);
      }
      return store();
    })
    .immediate();
}
