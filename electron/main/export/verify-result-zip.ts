import { createHash } from 'node:crypto';

import yauzl from 'yauzl';

import type { Accuracies, StoredQualityReport } from '../../common/ipc-contract.js';
import { isRecord } from '../../common/is-record.js';
import { DatasetError, OFFICIAL_INPUT_ROWS, OFFICIAL_INPUT_SHA256, parsePromptRecords } from '../../../evals/ifeval/dataset.js';
import { formatEvalResultRow } from '../../../evals/ifeval/eval-results.js';
import { reportFindingsLines } from '../../../evals/ifeval/findings-jsonl.js';
import { scoreResponses } from '../../../evals/ifeval/score.js';
import type { TextTools } from '../../../evals/ifeval/text/text-tools.js';
import type { ScoreSummary } from '../../../evals/ifeval/types.js';
import { checkRegularFile } from '../../node/regular-file.js';
import { accuraciesOf } from '../jobs/run-accuracies.js';
import { parseQualityReport, recordedPackManifestSha256 } from '../prep/quality-report.js';
import type { ComparableResponse } from '../services/run-compare.js';
import type { ResultManifest } from './write-result-zip.js';
import { inputLinesForRun, RESULT_FILES, RESULT_FORMAT, RESULT_FORMAT_QUALITY, RESULT_LAYOUTS } from './write-result-zip.js';

const MiB = 1 << 20;

/**
 * The most each entry may hold uncompressed. responses.jsonl and the eval results hold at most 541 responses of at most
 * 65,536 tokens (the most a run allows); at ~4 bytes a token that is ~135 MiB of text, and 256 MiB leaves room for
 * JSON escaping while staying at half V8's string limit (2^29 - 24 characters), which decoding a larger entry hits.
 * The other files are under 1 MiB in a real result (the official input_data.jsonl is 207 KB).
 */
export const MAX_ENTRY_BYTES: Readonly<Record<string, number>> = {
  'manifest.json': 16 * MiB,
  'responses.jsonl': 256 * MiB,
  'input_data.jsonl': 16 * MiB,
  'eval_results_strict.jsonl': 256 * MiB,
  'eval_results_loose.jsonl': 256 * MiB,
  // A finding is a short sentence (~40 bytes) per instruction: 541 prompts hold ~100 KB.
  'findings.jsonl': 64 * MiB,
  'summary.json': 16 * MiB,
  'performance.json': MiB,
};
/** For an entry a result ZIP does not have: it is reported, so only its size matters. */
const MAX_OTHER_ENTRY_BYTES = MiB;
/** Larger archives are refused rather than read into memory. */
const MAX_UNCOMPRESSED_BYTES = 1 << 30;

/**
 * What went wrong reading one entry, said of that entry: yauzl's and zlib's own words ("too many bytes in the
 * stream", "invalid distance too far back") mean the ZIP was altered or damaged there.
 */
export function entryReadError(name: string, e: Error): Error {
  const m = e.message;
  const sizes = /^(too many|not enough) bytes in the stream\. expected (\d+)\. got (?:at least |only )?(\d+)/.exec(m);
  let what: string;
  if (sizes) {
    what = `its data holds ${sizes[1] === 'too many' ? 'more' : 'fewer'} bytes than the ZIP's directory records (${sizes[2]}): the ZIP was altered or damaged here`;
  } else if ((e as NodeJS.ErrnoException).code?.startsWith('Z_') || /invalid (distance|code|block|stored)|incorrect header|unexpected end of file/i.test(m)) {
    what = `its compressed data is damaged (${m}): the ZIP was altered or damaged here`;
  } else {
    what = m;
  }
  return new Error(`${name}: ${what}`, { cause: e });
}

/**
 * Reads every file entry of a ZIP into memory, each under its cap in MAX_ENTRY_BYTES (checked against the declared
 * size and again while inflating); throws naming the ZIP and the entry for an unreadable archive or entry.
 */
export async function readZipEntries(file: string): Promise<Map<string, Buffer>> {
  let zip: yauzl.ZipFile;
  try {
    await checkRegularFile(file);
    zip = await yauzl.openPromise(file, { lazyEntries: true, decodeStrings: true });
  } catch (e) {
    throw new Error(`${file}: not a readable ZIP (${(e as Error).message})`, { cause: e });
  }
  const out = new Map<string, Buffer>();
  let total = 0;
  try {
    await new Promise<void>((resolve, reject) => {
      zip.on('error', reject);
      zip.on('end', () => resolve());
      zip.on('entry', (entry: yauzl.Entry) => {
        const name = entry.fileName;
        if (name.endsWith('/')) return zip.readEntry();
        if (out.has(name)) return reject(new Error(`${name}: in the ZIP twice`));
        const known = Object.hasOwn(MAX_ENTRY_BYTES, name);
        const cap = known ? MAX_ENTRY_BYTES[name]! : MAX_OTHER_ENTRY_BYTES;
        const tooLarge = () =>
          new Error(`${name}: more than ${cap} bytes uncompressed, ${known ? `more than a result ZIP's ${name} holds` : 'and not a file of a result ZIP'}`);
        if (entry.uncompressedSize > cap) return reject(tooLarge());
        total += entry.uncompressedSize;
        if (total > MAX_UNCOMPRESSED_BYTES) return reject(new Error(`more than ${MAX_UNCOMPRESSED_BYTES} bytes uncompressed`));
        zip.openReadStream(entry, (err, stream) => {
          if (err) return reject(entryReadError(name, err));
          const chunks: Buffer[] = [];
          let bytes = 0;
          stream.on('data', (c: Buffer) => {
            bytes += c.length;
            if (bytes > cap) {
              stream.destroy();
              reject(tooLarge());
              return;
            }
            chunks.push(c);
          });
          stream.on('error', (e: Error) => reject(entryReadError(name, e)));
          stream.on('end', () => {
            out.set(name, Buffer.concat(chunks));
            zip.readEntry();
          });
        });
      });
      zip.readEntry();
    });
  } catch (e) {
    throw new Error(`${file}: reading the ZIP failed (${(e as Error).message})`, { cause: e });
  } finally {
    zip.close();
  }
  return out;
}

export interface ResultVerification {
  readonly verified: boolean;
  /** One precise line per problem; empty when verified. */
  readonly problems: readonly string[];
  /** Checks that could not be made, each saying why; they are not problems, and not passes either. */
  readonly unchecked: readonly string[];
  /** Re-scored accuracies; null when the responses could not be re-scored or no prompt was scored. */
  readonly accuracies: Accuracies | null;
  /**
   * The run as the ZIP holds it: the manifest's status, the prompts re-scored and the input rows included. A partial
   * run is not "completed".
   */
  readonly run?: { readonly status: string; readonly responses: number; readonly total: number };
  /** The responses as re-scored, in input order; absent when they could not be re-scored. */
  readonly responses?: readonly ComparableResponse[];
  /**
   * The INT4 check of the run's model that the ZIP carries (quality.json, a v3 ZIP), read but not re-checked: that
   * needs the model. Absent when the ZIP has none.
   */
  readonly quality?: StoredQualityReport;
}

export interface VerifyResultZipOptions {
  /**
   * The official IFEval input_data.jsonl. Without it, the rows of a run over part of the official set cannot be
   * compared with the official ones, and the report lists that as unchecked.
   */
  readonly officialInputText?: string;
  /** The ZIP's entries, when the caller has read them already (readZipEntries): the ZIP is then not read again. */
  readonly entries?: ReadonlyMap<string, Buffer>;
}

const sha256 = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');
export const isSha256 = (v: unknown): v is string => typeof v === 'string' && /^[0-9a-f]{64}$/.test(v);
export const isCount = (v: unknown): v is number => Number.isInteger(v) && (v as number) >= 0;

/** Key order does not matter; numbers must be equal exactly (JSON round-trips a double exactly). */
function sameJson(a: unknown, b: unknown): boolean {
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((x, i) => sameJson(x, b[i]));
  if (isRecord(a)) {
    if (!isRecord(b)) return false;
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((k) => Object.hasOwn(b, k) && sameJson(a[k], b[k]));
  }
  return a === b;
}

function brief(v: unknown, max = 160): string {
  const s = JSON.stringify(v) ?? 'absent';
  return s.length > max ? `${s.slice(0, max)}…` : s;
}

function parseJsonl(name: string, b: Buffer, problems: string[]): { rows: { line: number; value: unknown }[]; lines: number } {
  const rows: { line: number; value: unknown }[] = [];
  let lines = 0;
  b.toString('utf8')
    .split('\n')
    .forEach((line, i) => {
      if (line === '') return;
      lines++;
      try {
        rows.push({ line: i + 1, value: JSON.parse(line) });
      } catch (e) {
        problems.push(`${name} line ${i + 1}: invalid JSON (${(e as Error).message})`);
      }
    });
  return { rows, lines };
}

const SUMMARY_FIELDS = [
  'promptsScored',
  'instructionsScored',
  'promptLevelStrictAccuracy',
  'promptLevelLooseAccuracy',
  'instructionLevelStrictAccuracy',
  'instructionLevelLooseAccuracy',
  'promptsFollowedStrict',
  'promptsFollowedLoose',
  'instructionsFollowedStrict',
  'instructionsFollowedLoose',
] as const;

/** summary.json as the writer stores it: the summary plus the key of each scored prompt. */
type StoredSummary = ScoreSummary & { readonly keys: readonly number[] };

/** Compares a per-id table of summary.json (perInstruction, perCategory) row by row, by its id field. */
function compareTable(
  field: 'perInstruction' | 'perCategory',
  idField: 'id' | 'category',
  stored: unknown,
  fresh: readonly object[],
  problems: string[],
): void {
  if (!Array.isArray(stored)) {
    problems.push(`summary.json: ${field} is not a list`);
    return;
  }
  const byId = new Map<string, Record<string, unknown>>();
  stored.forEach((p: unknown, i) => {
    if (!isRecord(p) || typeof p[idField] !== 'string') problems.push(`summary.json: ${field}[${i}] is not an object with a string ${idField}`);
    else if (byId.has(p[idField])) problems.push(`summary.json: ${field} lists ${p[idField]} twice`);
    else byId.set(p[idField], p);
  });
  for (const row of fresh as readonly Record<string, unknown>[]) {
    const id = String(row[idField]);
    const p = byId.get(id);
    if (!p) {
      problems.push(`summary.json: ${field} has no row for ${id}`);
      continue;
    }
    for (const [k, v] of Object.entries(row)) {
      if (!sameJson(p[k], v)) problems.push(`summary.json: ${field} ${id} ${k} is ${brief(p[k])}, re-scoring gives ${brief(v)}`);
    }
    for (const k of Object.keys(p)) if (!Object.hasOwn(row, k)) problems.push(`summary.json: ${field} ${id} has an unexpected field ${k}`);
    byId.delete(id);
  }
  for (const id of byId.keys()) problems.push(`summary.json: ${field} lists ${id}, which no scored prompt has`);
}

/** Compares every field of summary.json with the re-scored summary. */
function compareSummary(stored: unknown, fresh: StoredSummary, problems: string[]): void {
  if (!isRecord(stored)) {
    problems.push('summary.json: not a JSON object');
    return;
  }
  for (const f of SUMMARY_FIELDS) {
    if (stored[f] !== fresh[f]) problems.push(`summary.json: ${f} is ${brief(stored[f])}, re-scoring gives ${fresh[f]}`);
  }
  compareTable('perInstruction', 'id', stored.perInstruction, fresh.perInstruction, problems);
  compareTable('perCategory', 'category', stored.perCategory, fresh.perCategory, problems);
  const keysOf = (v: unknown) => (Array.isArray(v) ? v.map((m: unknown) => (isRecord(m) ? m.key : m)) : v);
  if (!sameJson(stored.missing, fresh.missing)) {
    problems.push(
      sameJson(keysOf(stored.missing), keysOf(fresh.missing))
        ? 'summary.json: missing lists the right keys, but with prompts that differ from input_data.jsonl'
        : `summary.json: missing lists keys ${brief(keysOf(stored.missing))}, re-scoring gives ${brief(keysOf(fresh.missing))}`,
    );
  }
  for (const f of ['keys', 'unmatchedResponsePrompts'] as const) {
    if (!sameJson(stored[f], fresh[f])) problems.push(`summary.json: ${f} is ${brief(stored[f])}, re-scoring gives ${brief(fresh[f])}`);
  }
  for (const f of Object.keys(stored)) if (!Object.hasOwn(fresh, f)) problems.push(`summary.json: unexpected field ${f}`);
}

/**
 * Checks manifest.json `files` against the ZIP: one well-formed entry per result file, no other names, no name twice,
 * each file's size and sha256 as listed, and no unlisted file in the ZIP.
 */
/**
 * Checks manifest.json's `files` against the ZIP: each entry well formed, one of `expected` (the files of a `kind`),
 * listed once, present, with its sha256 and size; every expected file listed; nothing in the ZIP left unlisted.
 */
export function checkListedFiles(files: unknown, entries: ReadonlyMap<string, Buffer>, expected: readonly string[], kind: string, problems: string[]): void {
  if (!Array.isArray(files)) problems.push('manifest.json: files is not a list');
  const listed = new Set<string>();
  const named = new Set<string>();
  (Array.isArray(files) ? files : []).forEach((f: unknown, i) => {
    if (isRecord(f) && typeof f.name === 'string') named.add(f.name);
    if (!isRecord(f) || typeof f.name !== 'string' || !isCount(f.bytes) || !isSha256(f.sha256)) {
      problems.push(`manifest.json: files[${i}] needs a string name, an integer bytes and a sha256`);
      return;
    }
    const name = f.name;
    if (!expected.includes(name)) {
      problems.push(`manifest.json: files lists ${JSON.stringify(name)}, which is not a file of a ${kind}`);
      return;
    }
    if (listed.has(name)) {
      problems.push(`manifest.json: files lists ${name} twice`);
      return;
    }
    listed.add(name);
    const b = entries.get(name);
    if (!b) {
      problems.push(`${name}: listed in manifest.json but missing from the ZIP`);
      return;
    }
    const actual = sha256(b);
    if (actual !== f.sha256) problems.push(`${name}: sha256 is ${actual}, manifest.json says ${f.sha256}`);
    if (b.length !== f.bytes) problems.push(`${name}: ${b.length} bytes, manifest.json says ${f.bytes}`);
  });
  for (const name of expected) if (!listed.has(name)) problems.push(`manifest.json: files has no entry for ${name}`);
  for (const name of entries.keys()) {
    if (name !== 'manifest.json' && !named.has(name)) problems.push(`${name}: in the ZIP but not listed in manifest.json`);
  }
}

/** quality.json, where the ZIP has one: a report as `horizon quality` stores it, of an INT4 run's model. */
function readCarriedQuality(entries: ReadonlyMap<string, Buffer>, manifest: Record<string, unknown>, problems: string[]): StoredQualityReport | undefined {
  const b = entries.get('quality.json');
  if (!b) return undefined;
  const report = parseQualityReport(b.toString('utf8'));
  if (!report) {
    problems.push('quality.json: not an INT4 check report (horizon-quality-v1 with its figures)');
    return undefined;
  }
  const model = isRecord(manifest.model) ? manifest.model : {};
  if (model.weights !== 'int4') problems.push(`quality.json: an INT4 check, but manifest.json model.weights is ${brief(model.weights)}`);
  // The check must be of the pack the run used: its manifest's sha256 as the run's model manifest recorded it.
  const recorded = recordedPackManifestSha256(model.manifest, report.int4Dir);
  if (!report.packManifestSha256 || !recorded) {
    problems.push(`quality.json: cannot be tied to the run's pack (${!report.packManifestSha256 ? 'the report has no packManifestSha256' : `manifest.json's model manifest records no ${report.int4Dir}/horizon-manifest.json`})`);
  } else if (recorded !== report.packManifestSha256) {
    problems.push(`quality.json: checked the pack whose horizon-manifest.json has sha256 ${report.packManifestSha256}, but the run used ${recorded}`);
  }
  return report;
}

/** The 1-based number of the first line where two texts differ. */
function firstDifferingLine(a: string, b: string): number {
  const la = a.split('\n');
  const lb = b.split('\n');
  const i = la.findIndex((l, j) => l !== lb[j]);
  return (i === -1 ? la.length : i) + 1;
}

/**
 * Ties the ZIP's input_data.jsonl (the rows the run used) to what manifest.json says about it and about the whole
 * dataset: `run.included` (rows + sha256 of the included file), `run.total` and `run.datasetRows` (how many rows the
 * run must have used), and, for the official IFEval set, the official rows: all 541 by the pinned sha256, fewer by
 * comparing them with the first rows of `officialText`. ZIPs written before `included`/`datasetRows` existed get the
 * checks their manifest allows.
 */
function checkIncludedInput(
  run: Record<string, unknown>,
  input: Buffer,
  rows: number,
  officialText: string | undefined,
  problems: string[],
  unchecked: string[],
): void {
  const actual = sha256(input);
  const included = run.included;
  if (included !== undefined) {
    if (!isRecord(included) || !isCount(included.rows) || !isSha256(included.sha256)) {
      problems.push('manifest.json: run.included needs an integer rows and a sha256');
    } else {
      if (included.file !== undefined && included.file !== 'input_data.jsonl') {
        problems.push(`manifest.json: run.included.file is ${JSON.stringify(included.file)}, expected "input_data.jsonl"`);
      }
      if (actual !== included.sha256) {
        problems.push(`input_data.jsonl: sha256 is ${actual}, manifest.json run.included.sha256 says ${included.sha256}`);
      }
      if (rows !== included.rows) problems.push(`input_data.jsonl: ${rows} rows, manifest.json run.included.rows says ${included.rows}`);
    }
  }
  if (run.datasetRows !== undefined && !isCount(run.datasetRows)) problems.push('manifest.json: run.datasetRows is not a row count');
  if (!isSha256(run.datasetSha256)) {
    problems.push(`manifest.json: run.datasetSha256 is ${JSON.stringify(run.datasetSha256)}, not a sha256`);
    return;
  }
  const official = run.datasetSha256 === OFFICIAL_INPUT_SHA256;
  if (official && isCount(run.datasetRows) && run.datasetRows !== OFFICIAL_INPUT_ROWS) {
    problems.push(`manifest.json: run.datasetRows is ${run.datasetRows}, but run.datasetSha256 is the official IFEval set of ${OFFICIAL_INPUT_ROWS} rows`);
  }
  const datasetRows = isCount(run.datasetRows) ? run.datasetRows : official ? OFFICIAL_INPUT_ROWS : undefined;
  if (datasetRows !== undefined && isCount(run.total)) {
    const used = Math.min(run.total, datasetRows);
    if (rows !== used) {
      problems.push(`input_data.jsonl: ${rows} rows, but a run of ${run.total} prompts over the ${datasetRows}-row dataset used ${used}`);
    }
  }
  if (!official) return;
  if (rows === OFFICIAL_INPUT_ROWS) {
    if (actual !== OFFICIAL_INPUT_SHA256) {
      problems.push(
        `input_data.jsonl: all ${OFFICIAL_INPUT_ROWS} rows of the official IFEval set (manifest.json run.datasetSha256), ` +
          `but its sha256 is ${actual}, not the official ${OFFICIAL_INPUT_SHA256}`,
      );
    }
  } else if (officialText === undefined) {
    unchecked.push(
      `input_data.jsonl: its ${rows} rows were not compared with the first ${rows} of the official IFEval set ` +
        '(manifest.json run.datasetSha256): the official input_data.jsonl was not available to the verifier',
    );
  } else {
    const expected = inputLinesForRun(officialText, rows);
    const text = input.toString('utf8');
    if (text !== expected) {
      const line = firstDifferingLine(text, expected);
      problems.push(
        `input_data.jsonl line ${line}: differs from row ${line} of the official IFEval input_data.jsonl ` +
          '(manifest.json run.datasetSha256 says the run used the official set)',
      );
    }
  }
}

/** The lines of a file with a row per scored prompt; a problem when they are not the `rows` that re-scoring gives. */
function rowLines(name: string, b: Buffer, rows: number, problems: string[]): string[] {
  const lines = b.toString('utf8').split('\n');
  if (lines.at(-1) === '') lines.pop();
  if (lines.length !== rows) problems.push(`${name}: ${lines.length} rows, re-scoring the responses gives ${rows}`);
  return lines;
}

const NOT_JSON = Symbol('not JSON');

/** A row's line parsed, or NOT_JSON with the problem said at `at`. */
function parseRow(at: string, line: string, problems: string[]): unknown {
  try {
    return JSON.parse(line);
  } catch (e) {
    problems.push(`${at}: invalid JSON (${(e as Error).message})`);
    return NOT_JSON;
  }
}

/** Compares eval_results_{strict,loose}.jsonl line by line with the re-scored rows. */
function compareEvalResults(
  entries: ReadonlyMap<string, Buffer>,
  report: ReturnType<typeof scoreResponses>,
  problems: string[],
): void {
  for (const mode of ['strict', 'loose'] as const) {
    const name = `eval_results_${mode}.jsonl`;
    const b = entries.get(name);
    if (!b) continue;
    const fresh = report[mode];
    const storedLines = rowLines(name, b, fresh.length, problems);
    fresh.forEach((row, i) => {
      const stored = storedLines[i];
      if (stored === undefined || stored === formatEvalResultRow(row)) return;
      const at = `${name} line ${i + 1} (key ${report.keys[i]})`;
      const parsed = parseRow(at, stored, problems);
      if (parsed === NOT_JSON) return;
      if (!isRecord(parsed)) {
        problems.push(`${at}: not a JSON object`);
        return;
      }
      const before = problems.length;
      if (parsed.response !== row.response) problems.push(`${at}: response differs from responses.jsonl`);
      if (parsed.prompt !== row.prompt) problems.push(`${at}: prompt differs from input_data.jsonl`);
      if (!sameJson(parsed.follow_instruction_list, row.follow_instruction_list)) {
        problems.push(`${at}: follow_instruction_list is ${brief(parsed.follow_instruction_list)}, re-scoring gives ${JSON.stringify(row.follow_instruction_list)}`);
      }
      if (parsed.follow_all_instructions !== row.follow_all_instructions) {
        problems.push(`${at}: follow_all_instructions is ${brief(parsed.follow_all_instructions)}, re-scoring gives ${row.follow_all_instructions}`);
      }
      if (!sameJson(parsed.instruction_id_list, row.instruction_id_list)) problems.push(`${at}: instruction_id_list differs from input_data.jsonl`);
      if (problems.length === before) problems.push(`${at}: not in the reference format (formatting differs)`);
    });
  }
}

/** Where two JSON values first differ ("instructions[1].strict.finding"), with both sides; null when equal. */
function firstDifference(stored: unknown, fresh: unknown, at = ''): { at: string; stored: unknown; fresh: unknown } | null {
  if (Array.isArray(fresh) && Array.isArray(stored)) {
    if (stored.length !== fresh.length) return { at: `${at}.length`.replace(/^\./, ''), stored: stored.length, fresh: fresh.length };
    for (let i = 0; i < fresh.length; i++) {
      const d = firstDifference(stored[i], fresh[i], `${at}[${i}]`);
      if (d) return d;
    }
    return null;
  }
  if (isRecord(fresh) && isRecord(stored)) {
    for (const k of Object.keys(fresh)) {
      const d = firstDifference(stored[k], fresh[k], at === '' ? k : `${at}.${k}`);
      if (d) return d;
    }
    const extra = Object.keys(stored).find((k) => !Object.hasOwn(fresh, k));
    return extra === undefined ? null : { at: at === '' ? extra : `${at}.${extra}`, stored: stored[extra], fresh: undefined };
  }
  return sameJson(stored, fresh) ? null : { at, stored, fresh };
}

/** Compares findings.jsonl line by line with the findings of re-scoring (explainPrompt's, as the writer records them). */
function compareFindings(entries: ReadonlyMap<string, Buffer>, report: ReturnType<typeof scoreResponses>, problems: string[]): void {
  const name = 'findings.jsonl';
  const b = entries.get(name);
  if (!b) return;
  const lines = rowLines(name, b, report.keys.length, problems);
  reportFindingsLines(report).forEach((fresh, i) => {
    const line = lines[i];
    if (line === undefined) return;
    const at = `${name} line ${i + 1} (key ${fresh.key})`;
    const parsed = parseRow(at, line, problems);
    if (parsed === NOT_JSON) return;
    const d = firstDifference(parsed, fresh);
    if (d) problems.push(`${at}: ${d.at === '' ? 'the line' : d.at} is ${brief(d.stored)}, re-scoring gives ${brief(d.fresh)}`);
  });
}

/**
 * Checks a result ZIP: the manifest's sha256 of every file, then re-scores the retained responses against the
 * retained input_data.jsonl and compares with eval_results_{strict,loose}.jsonl, findings.jsonl (a v2 ZIP's) and
 * summary.json. The response count
 * must match manifest.json, and a run it calls completed must answer every included row.
 */
export async function verifyResultZip(file: string, tools: TextTools, opts: VerifyResultZipOptions = {}): Promise<ResultVerification> {
  if (opts.officialInputText !== undefined && sha256(opts.officialInputText) !== OFFICIAL_INPUT_SHA256) {
    throw new Error(`the official input_data.jsonl given to the verifier has sha256 ${sha256(opts.officialInputText)}, not ${OFFICIAL_INPUT_SHA256}`);
  }
  const problems: string[] = [];
  const unchecked: string[] = [];
  const fail = (problem?: string): ResultVerification => {
    if (problem !== undefined) problems.push(problem);
    return { verified: false, problems, unchecked, accuracies: null };
  };
  const entries = opts.entries ?? (await readZipEntries(file));
  const manifestBytes = entries.get('manifest.json');
  if (!manifestBytes) return fail('manifest.json: missing from the ZIP');
  let manifest: unknown;
  try {
    manifest = JSON.parse(manifestBytes.toString('utf8'));
  } catch (e) {
    return fail(`manifest.json: invalid JSON (${(e as Error).message})`);
  }
  if (!isRecord(manifest)) return fail('manifest.json: not a JSON object');
  const layout = typeof manifest.format === 'string' && Object.hasOwn(RESULT_LAYOUTS, manifest.format) ? RESULT_LAYOUTS[manifest.format]! : undefined;
  if (!layout) {
    const earlier = Object.keys(RESULT_LAYOUTS).filter((f) => f !== RESULT_FORMAT && f !== RESULT_FORMAT_QUALITY);
    problems.push(`manifest.json: format is ${brief(manifest.format)}, expected ${RESULT_FORMAT} or ${RESULT_FORMAT_QUALITY} (or ${earlier.join(', ')}, from earlier builds)`);
  }
  checkListedFiles(manifest.files, entries, layout ?? RESULT_FILES, 'result ZIP', problems);
  const quality = readCarriedQuality(entries, manifest, problems);
  const run: Partial<Record<keyof ResultManifest['run'], unknown>> = isRecord(manifest.run) ? manifest.run : {};
  if (!isRecord(manifest.run)) {
    problems.push('manifest.json: run is not an object');
  } else {
    if (typeof run.status !== 'string') problems.push(`manifest.json: run.status is ${brief(run.status)}, not a string`);
    if (!isCount(run.responses)) problems.push(`manifest.json: run.responses is ${brief(run.responses)}, not a count`);
  }

  const input = entries.get('input_data.jsonl');
  const responsesFile = entries.get('responses.jsonl');
  if (!input || !responsesFile) return fail();
  const inputText = input.toString('utf8');
  const inputLines = inputText.split('\n');
  if (inputLines.at(-1) === '') inputLines.pop();
  checkIncludedInput(run, input, inputLines.length, opts.officialInputText, problems, unchecked);
  let records;
  try {
    records = parsePromptRecords(inputText, 'input_data.jsonl');
  } catch (e) {
    if (!(e instanceof DatasetError)) throw e;
    return fail(e.message);
  }
  const byKey = new Map(records.map((r) => [r.key, r]));
  const responses = new Map<string, string>();
  const parsed = parseJsonl('responses.jsonl', responsesFile, problems);
  if (isCount(run.responses) && parsed.lines !== run.responses) {
    problems.push(`responses.jsonl: ${parsed.lines} rows, manifest.json run.responses says ${run.responses}`);
  }
  for (const { line, value } of parsed.rows) {
    const at = `responses.jsonl line ${line}`;
    if (!isRecord(value) || typeof value.prompt !== 'string' || typeof value.response !== 'string' || !Number.isInteger(value.key)) {
      problems.push(`${at}: needs integer key, string prompt and string response`);
      continue;
    }
    const rec = byKey.get(value.key as number);
    if (!rec) problems.push(`${at}: key ${String(value.key)} is not in input_data.jsonl`);
    else if (rec.prompt !== value.prompt) problems.push(`${at}: key ${String(value.key)} prompt differs from input_data.jsonl`);
    if (responses.has(value.prompt)) problems.push(`${at}: key ${String(value.key)} answered twice`);
    responses.set(value.prompt, value.response);
  }
  const report = scoreResponses(records, responses, tools);
  const s = report.summary;
  if (run.status === 'completed' && s.missing.length > 0) {
    const shown = s.missing.slice(0, 5).map((m) => m.key).join(', ');
    problems.push(
      `responses.jsonl: no response for ${s.missing.length} of the ${records.length} rows of input_data.jsonl ` +
        `(keys ${shown}${s.missing.length > 5 ? ', …' : ''}), but manifest.json run.status is completed`,
    );
  }
  compareEvalResults(entries, report, problems);
  compareFindings(entries, report, problems);
  const summaryBytes = entries.get('summary.json');
  if (summaryBytes) {
    let stored: unknown;
    try {
      stored = JSON.parse(summaryBytes.toString('utf8'));
    } catch (e) {
      problems.push(`summary.json: invalid JSON (${(e as Error).message})`);
    }
    if (stored !== undefined) compareSummary(stored, { ...s, keys: report.keys }, problems);
  }
  return {
    verified: problems.length === 0,
    problems,
    unchecked,
    ...(typeof run.status === 'string' ? { run: { status: run.status, responses: s.promptsScored, total: records.length } } : {}),
    ...(quality ? { quality } : {}),
    responses: report.keys.map((key, i) => {
      const strict = report.strict[i]!;
      const loose = report.loose[i]!;
      return {
        key,
        prompt: strict.prompt,
        response: strict.response,
        strictPass: strict.follow_all_instructions,
        loosePass: loose.follow_all_instructions,
        verdicts: strict.instruction_id_list.map((id, j) => ({ instructionId: id, strict: strict.follow_instruction_list[j]!, loose: loose.follow_instruction_list[j]! })),
      };
    }),
    accuracies: accuraciesOf({
      prompts: s.promptsScored,
      promptsStrict: s.promptsFollowedStrict,
      promptsLoose: s.promptsFollowedLoose,
      instructions: s.instructionsScored,
      instructionsStrict: s.instructionsFollowedStrict,
      instructionsLoose: s.instructionsFollowedLoose,
    }),
  };
}
