import { accuracyIntervals, type AccuracyIntervals, type Interval } from '../../common/accuracy-intervals.js';
import type { Accuracies } from '../../common/ipc-contract.js';
import type { PassCounts, ResponseRepo } from '../db/response-repo.js';

/** The four IFEval accuracies over a run's stored responses; null before the first response. */
export function runAccuracies(responses: ResponseRepo, runId: string): Accuracies | null {
  return accuraciesOf(responses.passCounts(runId));
}

/** The four IFEval accuracies from pass counts; null when no prompt is counted. */
export function accuraciesOf(c: PassCounts): Accuracies | null {
  if (c.prompts === 0) return null;
  return {
    promptStrict: c.promptsStrict / c.prompts,
    promptLoose: c.promptsLoose / c.prompts,
    instructionStrict: c.instructions === 0 ? 0 : c.instructionsStrict / c.instructions,
    instructionLoose: c.instructions === 0 ? 0 : c.instructionsLoose / c.instructions,
  };
}

/** Two lines: prompt-level and instruction-level accuracy, strict and loose, in percent. */
export function formatAccuracies(a: Accuracies): string {
  const pct = (x: number) => `${(x * 100).toFixed(2)}%`;
  return (
    `prompt-level:      strict ${pct(a.promptStrict)}  loose ${pct(a.promptLoose)}\n` +
    `instruction-level: strict ${pct(a.instructionStrict)}  loose ${pct(a.instructionLoose)}`
  );
}

/** The four accuracies' 95% intervals over a run's stored prompts; null below two. */
export function runIntervals(responses: ResponseRepo, runId: string): AccuracyIntervals | null {
  return accuracyIntervals(responses.promptInstructionCounts(runId));
}

/** An interval in percent as the CLI writes it: "23.7-76.3%". */
export const formatRange = (r: Interval): string => `${(100 * r[0]).toFixed(1)}-${(100 * r[1]).toFixed(1)}%`;

/** The accuracies' 95% intervals, under formatAccuracies' lines and in its columns. */
export function formatIntervals(i: AccuracyIntervals): string {
  return [
    '95% intervals (prompts: Wilson; instructions: clustered by prompt):',
    `  prompt-level:      strict ${formatRange(i.promptStrict)}  loose ${formatRange(i.promptLoose)}`,
    `  instruction-level: strict ${formatRange(i.instructionStrict)}  loose ${formatRange(i.instructionLoose)}`,
  ].join('\n');
}
