import { DatasetError } from '../dataset.js';
import { scoreResponses } from '../score.js';
import type { InstructionFindings, InstructionId, ScoreReport } from '../types.js';
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
  /** Also work out what decided each instruction that fails strict (explainPrompt). */
  readonly explain?: boolean;
}

/** An instruction that fails strict, with what decided its verdicts. */
export interface StrictFailure {
  readonly key: number;
  readonly instructionId: InstructionId;
  readonly findings: InstructionFindings;
}

/** Loads the dataset, responses and text tools, scores, and writes the three result files. */
export async function scoreFiles(
  opts: ScoreFilesOptions,
): Promise<{ report: ScoreReport; files: EvalResultFiles; strictFailures?: StrictFailure[] }> {
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
  if (!opts.explain) return { report, files };
  const strictFailures = report.keys.flatMap((key, p) =>
    report.findings[p]!.flatMap((findings, i) =>
      findings.strict.pass ? [] : [{ key, instructionId: report.strict[p]!.instruction_id_list[i]!, findings }],
    ),
  );
  return { report, files, strictFailures };
}
