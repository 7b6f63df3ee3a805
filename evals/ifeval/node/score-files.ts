import { DatasetError } from '../dataset.js';
import { scoreResponses } from '../score.js';
import type { ScoreReport } from '../types.js';
import { loadPromptRecords, loadResponses } from './dataset.js';
import type { LoadPromptRecordsOptions } from './dataset.js';
import { loadTextTools } from './load-text-tools.js';
import { writeEvalResults } from './write-eval-results.js';
import type { EvalResultFiles } from './write-eval-results.js';

/** Inputs of one scoring run from files. */
export interface ScoreFilesOptions extends LoadPromptRecordsOptions {
  /** input_data.jsonl */
  readonly input: string;
  /** JSONL of `{"prompt", "response"}` rows. */
  readonly responses: string;
  /** Output folder for eval_results_{strict,loose}.jsonl and summary.json. */
  readonly outDir: string;
  /** Punkt English parameter folder (see resolvePunktDir). */
  readonly punktDir: string;
}

/** Loads the dataset, responses and text tools, scores, and writes the three result files. */
export async function scoreFiles(opts: ScoreFilesOptions): Promise<{ report: ScoreReport; files: EvalResultFiles }> {
  const [records, responses, tools] = await Promise.all([
    loadPromptRecords(opts.input, opts),
    loadResponses(opts.responses),
    loadTextTools({ punktDir: opts.punktDir }),
  ]);
  // Nothing to score is a mistake (a wrong or truncated file), not a run with no accuracies.
  if (records.length === 0) throw new DatasetError(`${opts.input}: no prompt rows (the file is empty)`);
  if (responses.size === 0) throw new DatasetError(`${opts.responses}: no response rows (the file is empty)`);
  const report = scoreResponses(records, responses, tools);
  const files = await writeEvalResults(opts.outDir, report);
  return { report, files };
}
