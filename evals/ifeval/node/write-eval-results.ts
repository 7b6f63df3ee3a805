import { mkdir, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';

import { formatEvalResults } from '../eval-results.js';
import { formatFindings, reportFindingsLines } from '../findings-jsonl.js';
import type { ScoreReport } from '../types.js';

async function writeAtomic(file: string, content: string): Promise<void> {
  const tmp = `${file}.${process.pid}.${Date.now()}.tmp`;
  await writeFile(tmp, content, 'utf8');
  await rename(tmp, file);
}

/** The files `writeEvalResults` writes, by absolute path. */
export interface EvalResultFiles {
  readonly strict: string;
  readonly loose: string;
  readonly summary: string;
  /** findings.jsonl: what decided each verdict, as a result ZIP holds it. */
  readonly findings: string;
}

/**
 * Writes eval_results_strict.jsonl, eval_results_loose.jsonl (reference format), summary.json and findings.jsonl (what
 * decided each verdict, as in a result ZIP) into `dir` (created if needed), each atomically (temp file + rename).
 */
export async function writeEvalResults(dir: string, report: ScoreReport): Promise<EvalResultFiles> {
  await mkdir(dir, { recursive: true });
  const files = {
    strict: path.resolve(dir, 'eval_results_strict.jsonl'),
    loose: path.resolve(dir, 'eval_results_loose.jsonl'),
    summary: path.resolve(dir, 'summary.json'),
    findings: path.resolve(dir, 'findings.jsonl'),
  };
  await writeAtomic(files.strict, formatEvalResults(report.strict));
  await writeAtomic(files.loose, formatEvalResults(report.loose));
  await writeAtomic(files.summary, `${JSON.stringify({ ...report.summary, keys: report.keys }, null, 2)}\n`);
  await writeAtomic(files.findings, formatFindings(reportFindingsLines(report)));
  return files;
}
