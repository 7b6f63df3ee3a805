import { createHash } from 'node:crypto';
import { writeFile } from 'node:fs/promises';

import type Database from 'better-sqlite3';
import { expect } from 'vitest';
import { ZipFile } from 'yazl';

import { ResponseRepo } from '../../../../../electron/main/db/response-repo.js';
import { ImportError } from '../../../../../electron/main/export/import-fields.js';
import { RunRepo } from '../../../../../electron/main/db/run-repo.js';
import type { NewRun } from '../../../../../electron/main/db/run-repo.js';
import { parsePromptRecords } from '../../../../../evals/ifeval/dataset.js';
import { formatEvalResults } from '../../../../../evals/ifeval/eval-results.js';
import { formatFindings, reportFindingsLines } from '../../../../../evals/ifeval/findings-jsonl.js';
import { scorePrompt, scoreResponses } from '../../../../../evals/ifeval/score.js';
import type { TextTools } from '../../../../../evals/ifeval/text/text-tools.js';
import { sampleRun } from '../db/sample-run.js';

export const sha256 = (b: Buffer | string): string => createHash('sha256').update(b).digest('hex');

export type Manifest = { run: Record<string, unknown>; files: { name: string; sha256: string; bytes: number }[] };
export const manifestOf = (entries: Map<string, Buffer>): Manifest => JSON.parse(entries.get('manifest.json')!.toString()) as Manifest;
export const setManifest = (entries: Map<string, Buffer>, m: Manifest): void => void entries.set('manifest.json', Buffer.from(JSON.stringify(m)));

export async function rezip(entries: Map<string, Buffer>, out: string): Promise<void> {
  const zip = new ZipFile();
  for (const [name, b] of entries) zip.addBuffer(b, name);
  zip.end();
  const chunks: Buffer[] = [];
  for await (const c of zip.outputStream) chunks.push(c as Buffer);
  await writeFile(out, Buffer.concat(chunks));
}

/**
 * Stores a run of `total` prompts over `inputText` with the first answers scored, then leaves it `status`.
 * `runs.finish` takes only the final statuses; 'running' marks it running instead.
 */
export function storeRun(
  db: Database.Database,
  runId: string,
  inputText: string,
  total: number,
  answers: readonly string[],
  tools: TextTools,
  status: 'completed' | 'cancelled' | 'failed' | 'running',
  overrides: Partial<NewRun> = {},
): { runs: RunRepo; responses: ResponseRepo } {
  const records = parsePromptRecords(inputText, 'input');
  const runs = new RunRepo(db);
  const responses = new ResponseRepo(db);
  runs.create({ ...sampleRun(runId), total, datasetSha256: sha256(inputText), ...overrides });
  runs.markRunning(runId);
  responses.insertBatch(
    runId,
    records.slice(0, answers.length).map((rec, i) => {
      const v = scorePrompt(rec, answers[i]!, tools);
      return {
        key: rec.key, position: i, prompt: rec.prompt, response: answers[i]!, tokens: 7, finishReason: 'stop' as const,
        ttftMs: 12, decodeTokensPerSecond: 50,
        verdicts: rec.instruction_id_list.map((id, j) => ({ instructionId: id, kwargs: rec.kwargs[j] ?? {}, strict: v.strict[j]!, loose: v.loose[j]! })),
      };
    }),
    { generatedTokens: 7 * answers.length, wallMs: 1000, peakMemoryBytes: 0, peakMemoryScope: null, h2dBytes: 0 },
  );
  if (status !== 'running') runs.finish(runId, status);
  return { runs, responses };
}

/**
 * What a careful forger does after editing input_data.jsonl or responses.jsonl: re-scores, then rewrites the eval
 * results, findings.jsonl, summary.json, manifest.json's response count and included rows, and every hash.
 */
export function regenerate(entries: Map<string, Buffer>, tools: TextTools): void {
  const input = entries.get('input_data.jsonl')!;
  const records = parsePromptRecords(input.toString(), 'input_data.jsonl');
  const lines = entries.get('responses.jsonl')!.toString().split('\n').filter(Boolean);
  const answers = new Map(lines.map((l) => JSON.parse(l) as { prompt: string; response: string }).map((r) => [r.prompt, r.response]));
  const report = scoreResponses(records, answers, tools);
  entries.set('eval_results_strict.jsonl', Buffer.from(formatEvalResults(report.strict)));
  entries.set('eval_results_loose.jsonl', Buffer.from(formatEvalResults(report.loose)));
  entries.set('summary.json', Buffer.from(`${JSON.stringify({ ...report.summary, keys: report.keys }, null, 2)}\n`));
  if (entries.has('findings.jsonl')) {
    entries.set('findings.jsonl', Buffer.from(formatFindings(reportFindingsLines(report))));
  }
  const m = manifestOf(entries);
  m.run.responses = lines.length;
  m.run.included = { file: 'input_data.jsonl', rows: records.length, sha256: sha256(input) };
  for (const f of m.files) {
    f.sha256 = sha256(entries.get(f.name)!);
    f.bytes = entries.get(f.name)!.length;
  }
  setManifest(entries, m);
}

/** Sets each listed file's hash and size in manifest.json to the entries' own: what a forger does after an edit. */
export function rehash(entries: Map<string, Buffer>): void {
  const m = JSON.parse(entries.get('manifest.json')!.toString()) as { files: { name: string; bytes: number; sha256: string }[] };
  for (const f of m.files) {
    f.sha256 = sha256(entries.get(f.name)!);
    f.bytes = entries.get(f.name)!.length;
  }
  entries.set('manifest.json', Buffer.from(JSON.stringify(m)));
}

/** Expects `promise` to throw an ImportError for `reason` whose message is `message`. */
export async function refused(promise: Promise<unknown>, reason: ImportError['reason'], message: string): Promise<void> {
  const e = await promise.then(
    () => null,
    (x: unknown) => x,
  );
  expect(e).toBeInstanceOf(ImportError);
  expect((e as ImportError).reason).toBe(reason);
  expect((e as ImportError).message).toBe(message);
}
