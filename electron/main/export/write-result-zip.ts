import { createHash } from 'node:crypto';
import path from 'node:path';

import type Database from 'better-sqlite3';

import { parsePromptRecords } from '../../../evals/ifeval/dataset.js';
import { formatEvalResults } from '../../../evals/ifeval/eval-results.js';
import { findingsLine, formatFindings } from '../../../evals/ifeval/findings-jsonl.js';
import { explainPrompt } from '../../../evals/ifeval/score.js';
import { summarize } from '../../../evals/ifeval/summary.js';
import type { TextTools } from '../../../evals/ifeval/text/text-tools.js';
import type { EvalResultRow, InstructionId } from '../../../evals/ifeval/types.js';
import { isLiveStatus } from '../../common/ipc-contract.js';
import type { ResponseRepo, StoredResponseWithPass } from '../db/response-repo.js';
import type { RunRecord, RunRepo } from '../db/run-repo.js';
import { readPackQualityText, recordedPackManifestSha256 } from '../prep/quality-report.js';
import { listedZipFiles, writeZipAtomically } from './zip-file.js';

/** Version tag of the result ZIP layout that export writes, in manifest.json. */
export const RESULT_FORMAT = 'horizon-result-v2';
/** The same layout with the INT4 check of the run's model (quality.json), written when one goes with the run. */
export const RESULT_FORMAT_QUALITY = 'horizon-result-v3';

const V1_FILES = ['responses.jsonl', 'input_data.jsonl', 'eval_results_strict.jsonl', 'eval_results_loose.jsonl', 'summary.json', 'performance.json'] as const;

const V2_FILES = [...V1_FILES.slice(0, 4), 'findings.jsonl', ...V1_FILES.slice(4)];

/**
 * The layouts the verifier reads, each with its files besides manifest.json in archive order. v2 added findings.jsonl
 * (what decided each verdict); a v1 ZIP, from earlier builds, has none and still verifies. v3 is v2 with quality.json,
 * so a ZIP without a check stays readable by builds that know v2 only.
 */
export const RESULT_LAYOUTS: Readonly<Record<string, readonly string[]>> = {
  'horizon-result-v1': V1_FILES,
  [RESULT_FORMAT]: V2_FILES,
  [RESULT_FORMAT_QUALITY]: [...V2_FILES, 'quality.json'],
};

/** The files of a result ZIP that export writes, besides manifest.json, in archive order. */
export const RESULT_FILES = RESULT_LAYOUTS[RESULT_FORMAT]!;

export interface ResultManifestFile {
  readonly name: string;
  readonly bytes: number;
  readonly sha256: string;
}

/** manifest.json of a result ZIP. */
export interface ResultManifest {
  readonly format: typeof RESULT_FORMAT | typeof RESULT_FORMAT_QUALITY;
  readonly run: {
    readonly id: string;
    readonly status: string;
    readonly createdAt: string;
    readonly finishedAt: string | null;
    readonly total: number;
    readonly responses: number;
    /** sha256 of the whole input_data.jsonl the run read (for IFEval, the official file), not of the ZIP's copy. */
    readonly datasetSha256: string;
    /** Non-empty rows in that whole file. Absent from ZIPs written before it was recorded. */
    readonly datasetRows?: number;
    /**
     * The ZIP's input_data.jsonl: the rows the run used (the first min(total, datasetRows)), their count and the
     * sha256 of the included file. For a run of the whole official set it hashes to the official sha256. Absent from
     * ZIPs written before it was recorded.
     */
    readonly included?: IncludedInput;
    /** The run's label (label.ts); absent when it has none, and from ZIPs written before labels. */
    readonly label?: string;
  };
  readonly model: {
    readonly id: string;
    readonly repo: string;
    readonly revision: string;
    readonly weights: string;
    readonly manifestSha256: string;
    /** The model's own manifest (prepared.json or a folder listing), parsed. */
    readonly manifest: unknown;
  };
  readonly appVersion: string;
  readonly backend: { readonly backend: string; readonly device: string; readonly residency: string };
  readonly policy: RunRecord['policy'];
  readonly files: readonly ResultManifestFile[];
}

/** manifest.json `run.included`: what the ZIP's input_data.jsonl holds. */
export interface IncludedInput {
  readonly file: 'input_data.jsonl';
  readonly rows: number;
  readonly sha256: string;
}

/** One line of responses.jsonl. */
export interface ResponseLine {
  readonly key: number;
  readonly prompt: string;
  readonly response: string;
  readonly tokens: number;
  readonly finish_reason: string;
  readonly timings: { readonly ttft_ms: number | null; readonly decode_tokens_per_second: number | null };
}

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const jsonl = (rows: readonly unknown[]) => rows.map((r) => `${JSON.stringify(r)}\n`).join('');

function evalRows(stored: readonly StoredResponseWithPass[], mode: 'strict' | 'loose'): EvalResultRow[] {
  return stored.map((r) => {
    const list = r.verdicts.map((v) => (mode === 'strict' ? v.strict : v.loose));
    return {
      follow_all_instructions: list.every(Boolean),
      follow_instruction_list: list,
      instruction_id_list: r.verdicts.map((v) => v.instructionId as InstructionId),
      prompt: r.prompt,
      response: r.response,
    };
  });
}

const datasetLines = (inputDataText: string) => inputDataText.split('\n').filter((l) => l.trim() !== '');

/** The lines of input_data.jsonl a run used: the first `total` non-empty lines of the dataset file, verbatim. */
export function inputLinesForRun(inputDataText: string, total: number): string {
  return datasetLines(inputDataText).slice(0, total).map((l) => `${l.replace(/\r$/, '')}\n`).join('');
}

export interface WriteResultZipOptions {
  readonly runs: RunRepo;
  readonly responses: ResponseRepo;
  /** The full input_data.jsonl text the run used (its sha256 is recorded with the run). */
  readonly inputDataText: string;
  /** The scorer's text tools, which findings.jsonl's findings are worked out with. */
  readonly tools: TextTools;
  /**
   * The connection `runs` and `responses` use. When given, the run, its responses and its figures are read in one
   * read transaction, so another process adding responses meanwhile cannot make them disagree.
   */
  readonly db?: Database.Database;
}

/** What a result ZIP holds of its run, counted from the rows written. */
export interface WrittenRun {
  readonly status: string;
  readonly responses: number;
  readonly total: number;
}

/** Builds the ZIP's files (everything but manifest.json) from the database; refuses a run still queued or running. */
export function buildResultFiles(
  opts: WriteResultZipOptions,
  runId: string,
): { run: RunRecord; files: Map<string, Buffer>; datasetRows: number; included: IncludedInput; responses: number } {
  const read = () => {
    const run = opts.runs.require(runId);
    if (isLiveStatus(run.status)) {
      throw new Error(`run ${runId} is still ${run.status}: export it once it has finished or been cancelled`);
    }
    return { run, stored: opts.responses.all(runId), figures: opts.responses.figures(runId) };
  };
  const { run, stored, figures } = opts.db ? opts.db.transaction(read)() : read();
  const datasetSha = sha256(Buffer.from(opts.inputDataText, 'utf8'));
  if (datasetSha !== run.datasetSha256) {
    throw new Error(`run ${runId} used input_data.jsonl with sha256 ${run.datasetSha256}, but the one given has ${datasetSha}`);
  }
  const inputText = inputLinesForRun(opts.inputDataText, run.total);
  const answered = new Set(stored.map((r) => r.key));
  const records = parsePromptRecords(inputText, 'input_data.jsonl');
  const missing = records.filter((r) => !answered.has(r.key));
  const byKey = new Map(records.map((r) => [r.key, r]));
  // Worked out afresh, as the verifier will: a run scored by an earlier build keeps its stored verdicts in the eval
  // results, and the verifier reports where they differ from these.
  const findings = stored.map((r) => {
    const record = byKey.get(r.key);
    if (!record) throw new Error(`run ${runId}: response key ${r.key} is not among the ${records.length} input rows the run used`);
    return findingsLine(r.key, record.instruction_id_list, explainPrompt(record, r.response, opts.tools));
  });
  const strict = evalRows(stored, 'strict');
  const loose = evalRows(stored, 'loose');
  const summary = summarize(strict, loose, missing);
  const responseLines: ResponseLine[] = stored.map((r) => ({
    key: r.key,
    prompt: r.prompt,
    response: r.response,
    tokens: r.tokens,
    finish_reason: r.finishReason,
    timings: { ttft_ms: r.ttftMs, decode_tokens_per_second: r.decodeTokensPerSecond },
  }));
  const performance = {
    backend: run.backend,
    device: run.deviceLabel,
    residency: run.residency,
    batches: figures.batches,
    generated_tokens: figures.generatedTokens,
    wall_seconds: figures.wallMs / 1000,
    mean_ttft_ms: figures.meanTtftMs,
    mean_decode_tokens_per_second: figures.meanDecodeTokensPerSecond,
    overall_tokens_per_second: figures.wallMs > 0 ? figures.generatedTokens / (figures.wallMs / 1000) : null,
    peak_memory_bytes: run.backend === 'cpu' ? null : figures.peakMemoryBytes,
    // 'process': this process's GPU memory; 'device': the GPU's used memory, other processes included; null: unknown.
    peak_memory_scope: run.backend === 'cpu' ? null : figures.peakMemoryScope,
    h2d_bytes: run.backend === 'cpu' ? null : figures.h2dBytes,
  };
  const datasetRows = datasetLines(opts.inputDataText).length;
  const input = Buffer.from(inputText);
  const included: IncludedInput = { file: 'input_data.jsonl', rows: Math.min(run.total, datasetRows), sha256: sha256(input) };
  const files = new Map<string, Buffer>([
    ['responses.jsonl', Buffer.from(jsonl(responseLines))],
    ['input_data.jsonl', input],
    ['eval_results_strict.jsonl', Buffer.from(formatEvalResults(strict))],
    ['eval_results_loose.jsonl', Buffer.from(formatEvalResults(loose))],
    ['findings.jsonl', Buffer.from(formatFindings(findings))],
    ['summary.json', Buffer.from(`${JSON.stringify({ ...summary, keys: stored.map((r) => r.key) }, null, 2)}\n`)],
    ['performance.json', Buffer.from(`${JSON.stringify(performance, null, 2)}\n`)],
  ]);
  return { run, files, datasetRows, included, responses: stored.length };
}

/**
 * The INT4 check that goes with a run, as quality.json's text: an imported run's as its ZIP carried it; for an INT4
 * run made here, the check stored beside its model, when it checked the very pack the run used (its manifest's sha256
 * as `modelManifest`, the run's, recorded it) and that pack is still as it was (readPackQuality).
 */
async function runQualityText(run: RunRecord, modelManifest: unknown): Promise<string | null> {
  if (run.qualityJson !== null) return run.qualityJson;
  if (run.imported !== null || run.weights !== 'int4' || run.packedDir === null) return null;
  // The report sits in the folder that holds the pack (a prepared model's folder; run.modelDir is its source/ there).
  const stored = await readPackQualityText(path.dirname(run.packedDir), run.packedDir);
  if (!stored?.report.packManifestSha256) return null;
  return recordedPackManifestSha256(modelManifest, stored.report.int4Dir) === stored.report.packManifestSha256 ? stored.text : null;
}

/**
 * Writes the run's result ZIP to `outPath` (through a temp file renamed into place) and returns its size, sha256 and
 * what it holds of the run. Refuses a run still queued or running.
 */
export async function writeResultZip(
  opts: WriteResultZipOptions,
  runId: string,
  outPath: string,
): Promise<{ path: string; bytes: number; sha256: string; run: WrittenRun }> {
  const { run, files, datasetRows, included, responses } = buildResultFiles(opts, runId);
  let parsedModelManifest: unknown;
  try {
    parsedModelManifest = JSON.parse(run.manifestJson);
  } catch {
    parsedModelManifest = run.manifestJson;
  }
  const quality = await runQualityText(run, parsedModelManifest);
  if (quality !== null) files.set('quality.json', Buffer.from(quality, 'utf8'));
  const manifest: ResultManifest = {
    format: quality !== null ? RESULT_FORMAT_QUALITY : RESULT_FORMAT,
    run: {
      id: run.id,
      status: run.status,
      createdAt: run.createdAt,
      finishedAt: run.finishedAt,
      total: run.total,
      responses,
      datasetSha256: run.datasetSha256,
      datasetRows,
      included,
      ...(run.label !== null ? { label: run.label } : {}),
    },
    model: {
      id: run.modelId,
      repo: run.modelRepo,
      revision: run.modelRevision,
      weights: run.weights,
      manifestSha256: run.manifestSha256,
      manifest: parsedModelManifest,
    },
    appVersion: run.appVersion,
    backend: { backend: run.backend, device: run.deviceLabel, residency: run.residency },
    policy: run.policy,
    files: listedZipFiles(files),
  };
  const written = await writeZipAtomically(
    outPath,
    [['manifest.json', Buffer.from(`${JSON.stringify(manifest, null, 2)}\n`)], ...files],
    new Date(run.finishedAt ?? run.createdAt),
    'result ZIP',
  );
  return { ...written, run: { status: run.status, responses, total: included.rows } };
}
