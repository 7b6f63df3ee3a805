import { createHash } from 'node:crypto';

import yauzl from 'yauzl';

import type { Accuracies } from '../../common/ipc-contract.js';
import { DatasetError, OFFICIAL_INPUT_ROWS, OFFICIAL_INPUT_SHA256, parsePromptRecords } from '../../../evals/ifeval/dataset.js';
import { formatEvalResultRow } from '../../../evals/ifeval/eval-results.js';
import { scoreResponses } from '../../../evals/ifeval/score.js';
import type { TextTools } from '../../../evals/ifeval/text/text-tools.js';
import type { ScoreSummary } from '../../../evals/ifeval/types.js';
import type { ResultManifest } from './write-result-zip.js';
import { RESULT_FILES, RESULT_FORMAT } from './write-result-zip.js';

/** Larger archives are refused rather than read into memory. */
const MAX_UNCOMPRESSED_BYTES = 1 << 30;

/** Reads every file entry of a ZIP into memory; throws naming the file for an unreadable archive. */
export async function readZipEntries(file: string): Promise<Map<string, Buffer>> {
  let zip: yauzl.ZipFile;
  try {
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
        if (entry.fileName.endsWith('/')) return zip.readEntry();
        total += entry.uncompressedSize;
        if (total > MAX_UNCOMPRESSED_BYTES) return reject(new Error(`more than ${MAX_UNCOMPRESSED_BYTES} bytes uncompressed`));
        zip.openReadStream(entry, (err, stream) => {
          if (err) return reject(err);
          const chunks: Buffer[] = [];
          stream.on('data', (c: Buffer) => chunks.push(c));
          stream.on('error', reject);
          stream.on('end', () => {
            if (out.has(entry.fileName)) return reject(new Error(`duplicate entry ${entry.fileName}`));
            out.set(entry.fileName, Buffer.concat(chunks));
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
  /** Re-scored accuracies, when the responses could be re-scored. */
  readonly accuracies: Accuracies | null;
  /** The run as its manifest describes it, when the ZIP could be read that far: a partial run is not "completed". */
  readonly run?: { readonly status: string; readonly responses: number; readonly total: number };
}

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

function parseJsonl(name: string, b: Buffer, problems: string[]): unknown[] {
  const rows: unknown[] = [];
  b.toString('utf8')
    .split('\n')
    .forEach((line, i) => {
      if (line === '') return;
      try {
        rows.push(JSON.parse(line));
      } catch (e) {
        problems.push(`${name} line ${i + 1}: invalid JSON (${(e as Error).message})`);
      }
    });
  return rows;
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

function compareSummary(stored: unknown, fresh: ScoreSummary, problems: string[]): void {
  if (typeof stored !== 'object' || stored === null) {
    problems.push('summary.json: not a JSON object');
    return;
  }
  const s = stored as Record<string, unknown>;
  for (const f of SUMMARY_FIELDS) {
    if (s[f] !== fresh[f]) problems.push(`summary.json: ${f} is ${JSON.stringify(s[f])}, re-scoring gives ${fresh[f]}`);
  }
  const storedPer = new Map<string, Record<string, unknown>>();
  if (Array.isArray(s.perInstruction)) for (const p of s.perInstruction as Record<string, unknown>[]) storedPer.set(String(p.id), p);
  else problems.push('summary.json: perInstruction is missing');
  for (const row of fresh.perInstruction) {
    const p = storedPer.get(row.id);
    if (!p) {
      problems.push(`summary.json: perInstruction has no row for ${row.id}`);
      continue;
    }
    for (const f of ['total', 'strictFollowed', 'looseFollowed'] as const) {
      if (p[f] !== row[f]) problems.push(`summary.json: perInstruction ${row.id} ${f} is ${JSON.stringify(p[f])}, re-scoring gives ${row[f]}`);
    }
    storedPer.delete(row.id);
  }
  for (const id of storedPer.keys()) problems.push(`summary.json: perInstruction lists ${id}, which no scored prompt has`);
}

const isSha256 = (v: unknown): v is string => typeof v === 'string' && /^[0-9a-f]{64}$/.test(v);
const isCount = (v: unknown): v is number => Number.isInteger(v) && (v as number) >= 0;

/**
 * Ties the ZIP's input_data.jsonl (the rows the run used) to what manifest.json says about it and about the whole
 * dataset: `run.included` (rows + sha256 of the included file), `run.total` and `run.datasetRows` (how many rows the
 * run must have used), and, for a run of the whole official IFEval set, the official pinned sha256. ZIPs written
 * before `included`/`datasetRows` existed get the checks their manifest allows.
 */
function checkIncludedInput(run: Partial<ResultManifest['run']>, input: Buffer, rows: number, problems: string[]): void {
  const actual = sha256(input);
  const included = run.included as Partial<NonNullable<ResultManifest['run']['included']>> | undefined;
  if (included !== undefined) {
    if (typeof included !== 'object' || included === null || !isCount(included.rows) || !isSha256(included.sha256)) {
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
  if (official && rows === OFFICIAL_INPUT_ROWS && actual !== OFFICIAL_INPUT_SHA256) {
    problems.push(
      `input_data.jsonl: all ${OFFICIAL_INPUT_ROWS} rows of the official IFEval set (manifest.json run.datasetSha256), ` +
        `but its sha256 is ${actual}, not the official ${OFFICIAL_INPUT_SHA256}`,
    );
  }
}

/**
 * Checks a result ZIP: the manifest's sha256 of every file, then re-scores the retained responses against the
 * retained input_data.jsonl and compares with eval_results_{strict,loose}.jsonl and summary.json.
 */
export async function verifyResultZip(file: string, tools: TextTools): Promise<ResultVerification> {
  const problems: string[] = [];
  const entries = await readZipEntries(file);
  const manifestBytes = entries.get('manifest.json');
  if (!manifestBytes) return { verified: false, problems: ['manifest.json: missing from the ZIP'], accuracies: null };
  let manifest: ResultManifest;
  try {
    manifest = JSON.parse(manifestBytes.toString('utf8')) as ResultManifest;
  } catch (e) {
    return { verified: false, problems: [`manifest.json: invalid JSON (${(e as Error).message})`], accuracies: null };
  }
  if (manifest.format !== RESULT_FORMAT) problems.push(`manifest.json: format is ${JSON.stringify(manifest.format)}, expected ${RESULT_FORMAT}`);
  const listed = new Map((Array.isArray(manifest.files) ? manifest.files : []).map((f) => [f.name, f]));
  for (const name of RESULT_FILES) if (!listed.has(name)) problems.push(`manifest.json: files has no entry for ${name}`);
  for (const [name, f] of listed) {
    const b = entries.get(name);
    if (!b) {
      problems.push(`${name}: listed in manifest.json but missing from the ZIP`);
      continue;
    }
    const actual = sha256(b);
    if (actual !== f.sha256) problems.push(`${name}: sha256 is ${actual}, manifest.json says ${f.sha256}`);
    if (b.length !== f.bytes) problems.push(`${name}: ${b.length} bytes, manifest.json says ${f.bytes}`);
  }
  for (const name of entries.keys()) {
    if (name !== 'manifest.json' && !listed.has(name)) problems.push(`${name}: in the ZIP but not listed in manifest.json`);
  }

  const input = entries.get('input_data.jsonl');
  const responsesFile = entries.get('responses.jsonl');
  if (!input || !responsesFile) return { verified: false, problems, accuracies: null };
  const inputText = input.toString('utf8');
  const inputLines = inputText.split('\n');
  if (inputLines.at(-1) === '') inputLines.pop();
  checkIncludedInput(typeof manifest.run === 'object' && manifest.run !== null ? manifest.run : {}, input, inputLines.length, problems);
  let records;
  try {
    records = parsePromptRecords(inputText, 'input_data.jsonl');
  } catch (e) {
    if (!(e instanceof DatasetError)) throw e;
    problems.push(e.message);
    return { verified: false, problems, accuracies: null };
  }
  const byKey = new Map(records.map((r) => [r.key, r]));
  const responses = new Map<string, string>();
  for (const [i, raw] of parseJsonl('responses.jsonl', responsesFile, problems).entries()) {
    const row = raw as Record<string, unknown>;
    const at = `responses.jsonl line ${i + 1}`;
    if (typeof row?.prompt !== 'string' || typeof row.response !== 'string' || !Number.isInteger(row.key)) {
      problems.push(`${at}: needs integer key, string prompt and string response`);
      continue;
    }
    const rec = byKey.get(row.key as number);
    if (!rec) problems.push(`${at}: key ${String(row.key)} is not in input_data.jsonl`);
    else if (rec.prompt !== row.prompt) problems.push(`${at}: key ${String(row.key)} prompt differs from input_data.jsonl`);
    if (responses.has(row.prompt)) problems.push(`${at}: key ${String(row.key)} answered twice`);
    responses.set(row.prompt, row.response);
  }
  const report = scoreResponses(records, responses, tools);
  for (const mode of ['strict', 'loose'] as const) {
    const name = `eval_results_${mode}.jsonl`;
    const b = entries.get(name);
    if (!b) continue;
    const storedLines = b.toString('utf8').split('\n');
    if (storedLines.at(-1) === '') storedLines.pop();
    const fresh = report[mode];
    if (storedLines.length !== fresh.length) {
      problems.push(`${name}: ${storedLines.length} rows, re-scoring the responses gives ${fresh.length}`);
    }
    fresh.forEach((row, i) => {
      const stored = storedLines[i];
      if (stored === undefined || stored === formatEvalResultRow(row)) return;
      const key = report.keys[i];
      let parsed: Record<string, unknown> | undefined;
      try {
        parsed = JSON.parse(stored) as Record<string, unknown>;
      } catch {
        problems.push(`${name} line ${i + 1} (key ${key}): invalid JSON`);
        return;
      }
      if (parsed.response !== row.response) problems.push(`${name} line ${i + 1} (key ${key}): response differs from responses.jsonl`);
      if (parsed.prompt !== row.prompt) problems.push(`${name} line ${i + 1} (key ${key}): prompt differs from input_data.jsonl`);
      if (JSON.stringify(parsed.follow_instruction_list) !== JSON.stringify(row.follow_instruction_list)) {
        problems.push(
          `${name} line ${i + 1} (key ${key}): follow_instruction_list is ${JSON.stringify(parsed.follow_instruction_list)}, ` +
            `re-scoring gives ${JSON.stringify(row.follow_instruction_list)}`,
        );
      }
      if (parsed.follow_all_instructions !== row.follow_all_instructions) {
        problems.push(`${name} line ${i + 1} (key ${key}): follow_all_instructions is ${String(parsed.follow_all_instructions)}, re-scoring gives ${row.follow_all_instructions}`);
      }
      if (JSON.stringify(parsed.instruction_id_list) !== JSON.stringify(row.instruction_id_list)) {
        problems.push(`${name} line ${i + 1} (key ${key}): instruction_id_list differs from input_data.jsonl`);
      }
      if (problems.at(-1)?.startsWith(`${name} line ${i + 1} `) !== true) {
        problems.push(`${name} line ${i + 1} (key ${key}): not in the reference format (formatting differs)`);
      }
    });
  }
  const summaryBytes = entries.get('summary.json');
  if (summaryBytes) {
    try {
      compareSummary(JSON.parse(summaryBytes.toString('utf8')), report.summary, problems);
    } catch (e) {
      problems.push(`summary.json: invalid JSON (${(e as Error).message})`);
    }
  }
  const s = report.summary;
  const run = manifest.run as Partial<ResultManifest['run']> | undefined;
  return {
    verified: problems.length === 0,
    problems,
    ...(run && typeof run.status === 'string' && isCount(run.responses) && isCount(run.total)
      ? { run: { status: run.status, responses: run.responses, total: run.total } }
      : {}),
    accuracies: {
      promptStrict: s.promptLevelStrictAccuracy,
      promptLoose: s.promptLevelLooseAccuracy,
      instructionStrict: s.instructionLevelStrictAccuracy,
      instructionLoose: s.instructionLevelLooseAccuracy,
    },
  };
}
